//! SillyTavern's sorts: V8's `Array.prototype.sort` with the comparator
//! `b.order - a.order` (world-info.js:88). With a missing `order` that
//! comparator gives NaN, which is no total order, and where such entries
//! land depends on V8's algorithm: [`sort_by_order_desc`] follows V8's
//! TimSort exactly for fewer than 64 items (one run: run detection, then
//! binary insertion), and is a stable merge sort beyond (the same result
//! whenever every order is a number). No comparator can make it panic.

use std::cmp::Ordering;

/// V8 sorts arrays shorter than this as one binary-insertion run
/// (`ComputeMinRunLength`).
const V8_MIN_MERGE: usize = 64;

/// Sorts `items` by `order` descending as SillyTavern's `sortFn` does under
/// V8 (`order_of` gives an item's `order`).
pub(crate) fn sort_by_order_desc<T: Clone>(items: &mut [T], order_of: impl Fn(&T) -> f64) {
    // `sortFn(a, b)` = b.order - a.order.
    let compare = |a: &T, b: &T| order_of(b) - order_of(a);
    if items.len() < V8_MIN_MERGE {
        v8_short_sort(items, compare);
    } else {
        stable_sort_by(items, |a, b| by_order_desc(order_of(a), order_of(b)));
    }
}

/// V8's TimSort on an array shorter than [`V8_MIN_MERGE`]
/// (`CountAndMakeRun` then `BinaryInsertionSort`, third_party/v8/builtins/
/// array-sort.tq): a comparison result counts as "less" only when it is
/// below zero, so NaN is never less.
fn v8_short_sort<T: Clone>(items: &mut [T], compare: impl Fn(&T, &T) -> f64) {
    let len = items.len();
    if len < 2 {
        return;
    }
    // The first run: strictly descending (then reversed) or not descending.
    let mut run = 2;
    let descending = compare(&items[1], &items[0]) < 0.0;
    while run < len {
        let order = compare(&items[run], &items[run - 1]);
        let ends = if descending {
            order >= 0.0
        } else {
            order < 0.0
        };
        if ends {
            break;
        }
        run += 1;
    }
    if descending {
        items[..run].reverse();
    }
    // Binary insertion of the rest.
    for start in run..len {
        let pivot = items[start].clone();
        let (mut left, mut right) = (0, start);
        while left < right {
            let mid = left + (right - left) / 2;
            if compare(&pivot, &items[mid]) < 0.0 {
                right = mid;
            } else {
                left = mid + 1;
            }
        }
        items[left..=start].rotate_right(1);
    }
}

/// `sortFn`: higher `order` first; NaN compares equal to anything.
pub(crate) fn by_order_desc(a: f64, b: f64) -> Ordering {
    let d = b - a;
    if d > 0.0 {
        Ordering::Greater
    } else if d < 0.0 {
        Ordering::Less
    } else {
        Ordering::Equal
    }
}

/// A stable merge sort that accepts any comparator.
pub(crate) fn stable_sort_by<T: Clone>(items: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    let len = items.len();
    if len < 2 {
        return;
    }
    let mut buf: Vec<T> = items.to_vec();
    let mut width = 1;
    let mut from_items = true;
    while width < len {
        {
            let (src, dst): (&[T], &mut [T]) = if from_items {
                (&*items, &mut buf[..])
            } else {
                (&buf[..], &mut *items)
            };
            let mut start = 0;
            while start < len {
                let mid = (start + width).min(len);
                let end = (start + 2 * width).min(len);
                let (mut i, mut j, mut k) = (start, mid, start);
                while i < mid && j < end {
                    // Take from the right only when it is strictly smaller.
                    if cmp(&src[j], &src[i]) == Ordering::Less {
                        dst[k] = src[j].clone();
                        j += 1;
                    } else {
                        dst[k] = src[i].clone();
                        i += 1;
                    }
                    k += 1;
                }
                while i < mid {
                    dst[k] = src[i].clone();
                    i += 1;
                    k += 1;
                }
                while j < end {
                    dst[k] = src[j].clone();
                    j += 1;
                    k += 1;
                }
                start = end;
            }
        }
        from_items = !from_items;
        width *= 2;
    }
    if !from_items {
        items.clone_from_slice(&buf);
    }
}

#[cfg(test)]
mod tests;
