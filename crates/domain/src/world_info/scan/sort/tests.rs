//! SillyTavern's sort under V8.

use super::*;

fn sorted(orders: &[f64]) -> Vec<usize> {
    let mut items: Vec<usize> = (0..orders.len()).collect();
    sort_by_order_desc(&mut items, |&i| orders[i]);
    items
}

#[test]
fn missing_orders_land_where_v8_puts_them() {
    // Node 20 (V8): `array.sort((a, b) => b.order - a.order)` on these
    // orders (NaN for a missing order).
    let nan = f64::NAN;
    assert_eq!(
        sorted(&[nan, 50.0, nan, 200.0, 100.0, nan, 7.0]),
        [0, 1, 2, 3, 4, 5, 6]
    );
    assert_eq!(sorted(&[3.0, 2.0, nan, 1.0, 5.0]), [0, 1, 2, 4, 3]);
}

#[test]
fn numbers_sort_descending_and_stably_at_any_length() {
    // Node 20 (V8) on 70 items with orders (i * 37) % 11.
    let orders: Vec<f64> = (0..70).map(|i| f64::from((i * 37) % 11)).collect();
    let want = [
        8, 19, 30, 41, 52, 63, 5, 16, 27, 38, 49, 60, 2, 13, 24, 35, 46, 57, 68, 10, 21, 32, 43,
        54, 65, 7, 18, 29, 40, 51, 62, 4, 15, 26, 37, 48, 59, 1, 12, 23, 34, 45, 56, 67, 9, 20, 31,
        42, 53, 64, 6, 17, 28, 39, 50, 61, 3, 14, 25, 36, 47, 58, 69, 0, 11, 22, 33, 44, 55, 66,
    ];
    assert_eq!(sorted(&orders), want);
}
