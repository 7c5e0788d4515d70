//! A message's swipes: the only swipe almost every message has is kept
//! inline, two or more in one boxed slice.

use std::fmt;
use std::ops::{Deref, DerefMut};

use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::Swipe;

/// A message's swipes; never empty. Almost every message has exactly one
/// swipe: it sits inline (40 bytes in the message) instead of in an
/// allocation of its own (a 48-byte chunk with glibc's header), and two
/// or more are one boxed slice of exactly their number.
///
/// Reads and changes as a `[Swipe]` through `Deref` and `DerefMut` (which
/// cannot change its length); it grows through [`Swipes::push`] and is
/// rebuilt from a `Vec`, where an empty list becomes one empty swipe.
/// Compares, prints and is stored (a JSON array) as the slice.
#[derive(Clone)]
pub struct Swipes(Inner);

/// Invariant: `Many` holds at least two swipes. Private, so only this
/// module's constructors (which keep it) make one.
#[derive(Clone)]
enum Inner {
    /// The only swipe.
    One(Swipe),
    /// Two swipes or more.
    Many(Box<[Swipe]>),
}

impl Swipes {
    /// Adds a swipe at the end. From one swipe to two this allocates the
    /// list; past two it reallocates it, as the boxed slice did.
    pub fn push(&mut self, swipe: Swipe) {
        self.0 = match std::mem::take(self).0 {
            Inner::One(only) => Inner::Many(Box::new([only, swipe])),
            Inner::Many(swipes) => {
                let mut swipes = swipes.into_vec();
                swipes.push(swipe);
                Inner::Many(swipes.into_boxed_slice())
            }
        };
    }

    /// The swipes' own allocation when they have one (two swipes or
    /// more), for counting what it holds.
    pub(crate) fn allocated(&self) -> Option<&[Swipe]> {
        match &self.0 {
            Inner::One(_) => None,
            Inner::Many(swipes) => Some(swipes),
        }
    }
}

/// One empty swipe: what a message without text has, and no allocation.
impl Default for Swipes {
    fn default() -> Swipes {
        Swipes(Inner::One(Swipe::default()))
    }
}

impl From<Swipe> for Swipes {
    fn from(only: Swipe) -> Swipes {
        Swipes(Inner::One(only))
    }
}

/// An empty `Vec` becomes one empty swipe (a message has one at least);
/// two or more keep the vector's buffer, shrunk to fit.
impl From<Vec<Swipe>> for Swipes {
    fn from(swipes: Vec<Swipe>) -> Swipes {
        match <[Swipe; 1]>::try_from(swipes) {
            Ok([only]) => Swipes(Inner::One(only)),
            Err(swipes) if swipes.is_empty() => Swipes::default(),
            Err(swipes) => Swipes(Inner::Many(swipes.into_boxed_slice())),
        }
    }
}

/// No swipes at all make one empty swipe; one swipe allocates nothing.
impl FromIterator<Swipe> for Swipes {
    fn from_iter<I: IntoIterator<Item = Swipe>>(iter: I) -> Swipes {
        let mut iter = iter.into_iter();
        let Some(first) = iter.next() else {
            return Swipes::default();
        };
        let Some(second) = iter.next() else {
            return Swipes(Inner::One(first));
        };
        let mut swipes = Vec::with_capacity(iter.size_hint().0.saturating_add(2));
        swipes.push(first);
        swipes.push(second);
        swipes.extend(iter);
        Swipes(Inner::Many(swipes.into_boxed_slice()))
    }
}

impl Deref for Swipes {
    type Target = [Swipe];
    fn deref(&self) -> &[Swipe] {
        match &self.0 {
            Inner::One(only) => std::slice::from_ref(only),
            Inner::Many(swipes) => swipes,
        }
    }
}

impl DerefMut for Swipes {
    fn deref_mut(&mut self) -> &mut [Swipe] {
        match &mut self.0 {
            Inner::One(only) => std::slice::from_mut(only),
            Inner::Many(swipes) => swipes,
        }
    }
}

impl<'a> IntoIterator for &'a Swipes {
    type Item = &'a Swipe;
    type IntoIter = std::slice::Iter<'a, Swipe>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut Swipes {
    type Item = &'a mut Swipe;
    type IntoIter = std::slice::IterMut<'a, Swipe>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

/// The swipes by value; the only swipe is moved out without allocating.
impl IntoIterator for Swipes {
    type Item = Swipe;
    type IntoIter = std::iter::Chain<std::option::IntoIter<Swipe>, std::vec::IntoIter<Swipe>>;
    fn into_iter(self) -> Self::IntoIter {
        match self.0 {
            Inner::One(only) => Some(only).into_iter().chain(Vec::new()),
            Inner::Many(swipes) => None.into_iter().chain(swipes.into_vec()),
        }
    }
}

impl PartialEq for Swipes {
    fn eq(&self, other: &Swipes) -> bool {
        **self == **other
    }
}

impl Eq for Swipes {}

impl fmt::Debug for Swipes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

/// A JSON array of the swipes, as the boxed slice was stored.
impl Serialize for Swipes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

/// An array of swipes, as the boxed slice was stored; an empty array
/// reads as one empty swipe. One swipe is read into place, without the
/// vector a slice would have been read through.
impl<'de> Deserialize<'de> for Swipes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Swipes, D::Error> {
        deserializer.deserialize_seq(SwipesVisitor)
    }
}

struct SwipesVisitor;

impl<'de> Visitor<'de> for SwipesVisitor {
    type Value = Swipes;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of swipes")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Swipes, A::Error> {
        let Some(first) = seq.next_element()? else {
            return Ok(Swipes::default());
        };
        let Some(second) = seq.next_element()? else {
            return Ok(Swipes(Inner::One(first)));
        };
        // The hint is the sender's word: cap what it reserves.
        let hint = seq.size_hint().unwrap_or(0).min(64);
        let mut swipes = Vec::with_capacity(hint.saturating_add(2));
        swipes.push(first);
        swipes.push(second);
        while let Some(swipe) = seq.next_element()? {
            swipes.push(swipe);
        }
        Ok(Swipes(Inner::Many(swipes.into_boxed_slice())))
    }
}

#[cfg(test)]
mod tests;
