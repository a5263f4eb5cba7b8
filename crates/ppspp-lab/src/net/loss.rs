//! Packet loss on a link: independent (Bernoulli) or bursty
//! (Gilbert–Elliott, a two-state Markov chain stepped once per packet).

use rand::rngs::Xoshiro256PlusPlus;
use rand::RngExt;

/// How a link loses packets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LossModel {
    /// No random loss (queues may still drop).
    None,
    /// Each packet lost independently with probability `p`.
    Bernoulli {
        /// Loss probability.
        p: f64,
    },
    /// Gilbert–Elliott: a good and a bad state, each with its own loss
    /// probability; the state moves before each packet.
    GilbertElliott {
        /// Probability of going from good to bad, per packet.
        p_good_to_bad: f64,
        /// Probability of going from bad to good, per packet (mean burst
        /// length in packets is its inverse).
        p_bad_to_good: f64,
        /// Loss probability in the good state.
        loss_good: f64,
        /// Loss probability in the bad state.
        loss_bad: f64,
    },
}

impl LossModel {
    /// The long-run fraction of packets lost.
    pub fn mean_rate(&self) -> f64 {
        match *self {
            LossModel::None => 0.0,
            LossModel::Bernoulli { p } => p,
            LossModel::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
            } => {
                let total = p_good_to_bad + p_bad_to_good;
                if total <= 0.0 {
                    return loss_good;
                }
                // Stationary probability of the bad state.
                let bad = p_good_to_bad / total;
                bad * loss_bad + (1.0 - bad) * loss_good
            }
        }
    }
}

/// A loss model with its state.
#[derive(Clone, Debug)]
pub struct Loss {
    model: LossModel,
    bad: bool,
}

impl Loss {
    /// A loss process starting in the good state.
    pub fn new(model: LossModel) -> Loss {
        Loss { model, bad: false }
    }

    /// Whether the next packet is lost.
    pub fn next_lost(&mut self, rng: &mut Xoshiro256PlusPlus) -> bool {
        match self.model {
            LossModel::None => false,
            LossModel::Bernoulli { p } => p > 0.0 && rng.random::<f64>() < p,
            LossModel::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_good,
                loss_bad,
            } => {
                let flip = if self.bad {
                    p_bad_to_good
                } else {
                    p_good_to_bad
                };
                if rng.random::<f64>() < flip {
                    self.bad = !self.bad;
                }
                let p = if self.bad { loss_bad } else { loss_good };
                p > 0.0 && rng.random::<f64>() < p
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn run(model: LossModel, n: u64) -> (u64, u64) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let mut loss = Loss::new(model);
        let (mut lost, mut bursts, mut prev) = (0, 0, false);
        for _ in 0..n {
            let l = loss.next_lost(&mut rng);
            lost += u64::from(l);
            bursts += u64::from(l && !prev);
            prev = l;
        }
        (lost, bursts)
    }

    /// Within 5 standard deviations of a binomial count.
    fn within(count: u64, n: u64, p: f64) -> bool {
        let mean = n as f64 * p;
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        (count as f64 - mean).abs() <= 5.0 * sd
    }

    #[test]
    fn bernoulli_rate_matches() {
        let n = 200_000;
        for p in [0.001, 0.01, 0.1, 0.5] {
            let (lost, _) = run(LossModel::Bernoulli { p }, n);
            assert!(within(lost, n, p), "p={p}: lost {lost} of {n}");
        }
        assert_eq!(run(LossModel::None, n).0, 0);
        assert_eq!(run(LossModel::Bernoulli { p: 0.0 }, n).0, 0);
        assert_eq!(run(LossModel::Bernoulli { p: 1.0 }, n).0, n);
    }

    #[test]
    fn gilbert_elliott_rate_and_burstiness() {
        let model = LossModel::GilbertElliott {
            p_good_to_bad: 0.01,
            p_bad_to_good: 0.25,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        let n = 400_000;
        let (lost, bursts) = run(model, n);
        let rate = lost as f64 / n as f64;
        let expect = model.mean_rate();
        assert!((expect - 0.01 / 0.26).abs() < 1e-12);
        // Bursts make the count vary more than a binomial: allow 15 %.
        assert!(
            (rate - expect).abs() < 0.15 * expect,
            "rate {rate} vs {expect}"
        );
        // Mean burst length 1 / p_bad_to_good = 4 packets (±25 %).
        let mean_burst = lost as f64 / bursts as f64;
        assert!((3.0..5.0).contains(&mean_burst), "mean burst {mean_burst}");
    }
}
