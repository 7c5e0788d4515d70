//! Scene breaks found against the true boundaries: one-to-one greedy
//! matching within a tolerance of messages, then precision and recall.

/// How the breaks found compare with the boundaries at one tolerance.
#[derive(Debug, Clone, PartialEq)]
pub struct BreakScore {
    /// Most chat indices a found break may be from its boundary.
    pub tolerance: usize,
    /// Breaks found.
    pub found: usize,
    /// True boundaries.
    pub boundaries: usize,
    /// Pairs matched (each break and each boundary in at most one).
    pub matched: usize,
}

impl BreakScore {
    /// matched / found; `None` when nothing was found.
    pub fn precision(&self) -> Option<f64> {
        (self.found > 0).then(|| self.matched as f64 / self.found as f64)
    }

    /// matched / boundaries; `None` when there is no boundary.
    pub fn recall(&self) -> Option<f64> {
        (self.boundaries > 0).then(|| self.matched as f64 / self.boundaries as f64)
    }

    /// Adds another conversation's counts (same tolerance).
    pub fn add(&mut self, other: &BreakScore) {
        self.found += other.found;
        self.boundaries += other.boundaries;
        self.matched += other.matched;
    }
}

/// Matches breaks to boundaries one-to-one: pairs are taken closest first
/// (ties by the earlier break, then the earlier boundary), each break and
/// each boundary at most once, only within `tolerance`.
pub fn score(found: &[usize], boundaries: &[usize], tolerance: usize) -> BreakScore {
    let mut pairs: Vec<(usize, usize, usize)> = Vec::new();
    for (f, &at) in found.iter().enumerate() {
        for (b, &boundary) in boundaries.iter().enumerate() {
            let distance = at.abs_diff(boundary);
            if distance <= tolerance {
                pairs.push((distance, f, b));
            }
        }
    }
    pairs.sort_unstable();
    let mut found_used = vec![false; found.len()];
    let mut boundary_used = vec![false; boundaries.len()];
    let mut matched = 0;
    for (_, f, b) in pairs {
        if !found_used[f] && !boundary_used[b] {
            found_used[f] = true;
            boundary_used[b] = true;
            matched += 1;
        }
    }
    BreakScore {
        tolerance,
        found: found.len(),
        boundaries: boundaries.len(),
        matched,
    }
}

#[cfg(test)]
mod tests;
