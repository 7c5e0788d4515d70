//! SillyTavern's sorts: `Array.prototype.sort` is stable, and its
//! comparator `b.order - a.order` (world-info.js:88) treats NaN as equal.
//! A comparator that is not a total order (NaN) must not panic here, so the
//! sort is a plain merge sort rather than the standard library's.

use std::cmp::Ordering;

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
