//! Pure computations behind the plots and tables: empirical CDF and CCDF,
//! quantiles, per-group figures, point thinning for plotting.

use super::csv::{LinkStatRow, PeerRow};

/// Empirical CDF of `values` over a population of `total`: one point
/// `(x, F(x))` per distinct finite value `x`, ascending, where `F(x)` is
/// the fraction of the population with a value `<= x`. Members of the
/// population without a value (e.g. leechers that never completed) count
/// as never reached, so the curve ends below 1 when `total` exceeds the
/// number of finite values. `total` is raised to that number if smaller;
/// an empty population gives no points.
pub fn cdf(values: &[f64], total: usize) -> Vec<(f64, f64)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let n = total.max(v.len());
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (i, &x) in v.iter().enumerate() {
        let f = (i + 1) as f64 / n as f64;
        match out.last_mut() {
            Some(last) if last.0 == x => last.1 = f,
            _ => out.push((x, f)),
        }
    }
    out
}

/// Empirical complementary CDF of `values`: one point `(x, P(X > x))` per
/// distinct finite value `x`, ascending. The last point (the maximum) has
/// probability 0. Non-finite values are ignored.
pub fn ccdf(values: &[f64]) -> Vec<(f64, f64)> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len() as f64;
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (i, &x) in v.iter().enumerate() {
        let p = (v.len() - i - 1) as f64 / n;
        match out.last_mut() {
            Some(last) if last.0 == x => last.1 = p,
            _ => out.push((x, p)),
        }
    }
    out
}

/// The vertices of the step function through `points` (as returned by
/// [`cdf`] or [`ccdf`]): the value holds from each `x` to the next, and
/// `start` is the level before the first point.
pub fn steps(points: &[(f64, f64)], start: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len() * 2);
    let mut level = start;
    for &(x, y) in points {
        out.push((x, level));
        out.push((x, y));
        level = y;
    }
    out
}

/// The nearest-rank quantile `q` of ascending `sorted` values (the same
/// convention as the run summary), or NaN when empty.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * q.clamp(0.0, 1.0)).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Arithmetic mean, NaN when empty.
pub(crate) fn mean(values: impl IntoIterator<Item = f64>) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for v in values {
        sum += v;
        n += 1;
    }
    if n == 0 {
        f64::NAN
    } else {
        sum / n as f64
    }
}

/// Drops points that are within `x_tol` and `y_tol` of the last kept one
/// (after mapping y through `log10` when `log_y`), always keeping the first
/// and the last point. Keeps plots of huge series small without visible
/// change.
pub(crate) fn thin(points: &[(f64, f64)], x_tol: f64, y_tol: f64, log_y: bool) -> Vec<(f64, f64)> {
    let ty = |y: f64| if log_y { y.log10() } else { y };
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (i, &(x, y)) in points.iter().enumerate() {
        let keep = match out.last() {
            None => true,
            Some(&(lx, ly)) => {
                i + 1 == points.len() || (x - lx).abs() > x_tol || (ty(y) - ty(ly)).abs() > y_tol
            }
        };
        if keep {
            out.push((x, y));
        }
    }
    out
}

/// The figures of one peer group.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct GroupStats {
    pub group: String,
    pub peers: usize,
    pub leechers: usize,
    /// Download times of the leechers that completed, ascending.
    pub times: Vec<f64>,
    /// Means over the group's leechers (NaN without leechers).
    pub mean_from_seeders: f64,
    pub mean_from_peers: f64,
    /// Mean over all peers of the group.
    pub mean_up: f64,
}

impl GroupStats {
    pub(crate) fn mean_download(&self) -> f64 {
        mean(self.times.iter().copied())
    }

    pub(crate) fn median_download(&self) -> f64 {
        quantile(&self.times, 0.5)
    }
}

/// Per-group figures, groups in order of first appearance.
pub(crate) fn group_stats(peers: &[PeerRow]) -> Vec<GroupStats> {
    let mut order: Vec<&str> = Vec::new();
    for p in peers {
        if !order.contains(&p.group.as_str()) {
            order.push(&p.group);
        }
    }
    order
        .into_iter()
        .map(|g| {
            let members: Vec<&PeerRow> = peers.iter().filter(|p| p.group == g).collect();
            let leechers: Vec<&PeerRow> = members.iter().copied().filter(|p| p.leecher).collect();
            let mut times: Vec<f64> = leechers
                .iter()
                .filter_map(|p| p.download_s)
                .filter(|t| t.is_finite())
                .collect();
            times.sort_by(f64::total_cmp);
            GroupStats {
                group: g.to_string(),
                peers: members.len(),
                leechers: leechers.len(),
                times,
                mean_from_seeders: mean(leechers.iter().map(|p| p.from_seeders as f64)),
                mean_from_peers: mean(leechers.iter().map(|p| p.from_peers as f64)),
                mean_up: mean(members.iter().map(|p| p.up as f64)),
            }
        })
        .collect()
}

/// The `k` links with the most drops (queue + loss), most first, ties by
/// link id; links without drops are left out.
pub(crate) fn top_drops(stats: &[LinkStatRow], k: usize) -> Vec<&LinkStatRow> {
    let mut v: Vec<&LinkStatRow> = stats.iter().filter(|s| s.drops() > 0).collect();
    v.sort_by(|a, b| b.drops().cmp(&a.drops()).then(a.link.cmp(&b.link)));
    v.truncate(k);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdf_counts_ties_and_incomplete() {
        assert_eq!(
            cdf(&[3.0, 1.0, 2.0, 2.0], 4),
            vec![(1.0, 0.25), (2.0, 0.75), (3.0, 1.0)]
        );
        // One of five never completed: the curve ends at 0.8.
        assert_eq!(
            cdf(&[3.0, 1.0, 2.0, 2.0], 5),
            vec![(1.0, 0.2), (2.0, 0.6), (3.0, 0.8)]
        );
        // A total below the count is raised; non-finite values are ignored.
        assert_eq!(cdf(&[2.0, f64::NAN, 1.0], 0), vec![(1.0, 0.5), (2.0, 1.0)]);
        assert!(cdf(&[], 0).is_empty());
        assert!(cdf(&[], 3).is_empty());
    }

    #[test]
    fn ccdf_is_fraction_strictly_greater() {
        assert_eq!(
            ccdf(&[2.0, 1.0, 3.0, 2.0]),
            vec![(1.0, 0.75), (2.0, 0.25), (3.0, 0.0)]
        );
        assert_eq!(ccdf(&[0.0, 0.0, 0.0, 5.0]), vec![(0.0, 0.25), (5.0, 0.0)]);
        assert!(ccdf(&[]).is_empty());
        assert!(ccdf(&[f64::INFINITY]).is_empty());
    }

    #[test]
    fn steps_hold_each_level_until_the_next_x() {
        assert_eq!(
            steps(&[(1.0, 0.5), (2.0, 1.0)], 0.0),
            vec![(1.0, 0.0), (1.0, 0.5), (2.0, 0.5), (2.0, 1.0)]
        );
    }

    #[test]
    fn quantile_nearest_rank() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile(&v, 0.5), 3.0);
        assert_eq!(quantile(&v, 0.95), 5.0);
        assert_eq!(quantile(&[1.0, 2.0], 0.5), 2.0);
        assert!(quantile(&[], 0.5).is_nan());
    }

    #[test]
    fn thin_keeps_ends_and_moves() {
        let pts: Vec<(f64, f64)> = (0..=100).map(|i| (i as f64, 0.0)).collect();
        let t = thin(&pts, 10.0, 1.0, false);
        assert_eq!(t.first(), Some(&(0.0, 0.0)));
        assert_eq!(t.last(), Some(&(100.0, 0.0)));
        assert!(t.len() < 15, "{}", t.len());
        let jump = [(0.0, 1.0), (0.0, 0.01), (0.0, 0.009)];
        assert_eq!(thin(&jump, 1.0, 0.5, true).len(), 3);
    }

    fn peer(group: &str, leecher: bool, dl: Option<f64>, s: u64, p: u64, up: u64) -> PeerRow {
        PeerRow {
            group: group.into(),
            leecher,
            download_s: dl,
            from_seeders: s,
            from_peers: p,
            up,
        }
    }

    #[test]
    fn group_stats_per_group_in_first_seen_order() {
        let peers = [
            peer("seed", false, None, 0, 0, 900),
            peer("fast", true, Some(10.0), 100, 300, 50),
            peer("fast", true, Some(20.0), 200, 200, 150),
            peer("fast", true, None, 0, 100, 100),
        ];
        let g = group_stats(&peers);
        assert_eq!(g.len(), 2);
        assert_eq!(
            (g[0].group.as_str(), g[0].peers, g[0].leechers),
            ("seed", 1, 0)
        );
        assert!(g[0].mean_from_seeders.is_nan());
        assert_eq!(g[0].mean_up, 900.0);
        assert_eq!(
            (g[1].group.as_str(), g[1].peers, g[1].leechers),
            ("fast", 3, 3)
        );
        assert_eq!(g[1].times, vec![10.0, 20.0]);
        assert_eq!(g[1].mean_download(), 15.0);
        assert_eq!(g[1].median_download(), 20.0);
        assert_eq!(g[1].mean_from_seeders, 100.0);
        assert_eq!(g[1].mean_from_peers, 200.0);
        assert_eq!(g[1].mean_up, 100.0);
    }
}
