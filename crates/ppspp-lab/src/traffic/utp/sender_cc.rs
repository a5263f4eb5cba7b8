//! libutp's congestion control: the LEDBAT step per ACK
//! (`apply_ccontrol`), its slow start, the halving on loss
//! (`maybe_decay_win`) and what a timeout does to the window
//! (`check_timeouts`).

use ppspp_core::time::{duration_micros, Instant};

use super::super::sender_config::{
    MAX_CWND_INCREASE_BYTES_PER_RTT, MAX_WINDOW_DECAY, MIN_WINDOW_SIZE,
};
use super::UtpSender;

/// libutp stops growing the window when it has not been the limit for
/// this long: the sender is application- or rate-limited, and a window it
/// does not use says nothing about the path.
const MAXED_OUT_RECENTLY_US: u64 = 1_000_000;

impl UtpSender {
    /// libutp `apply_ccontrol`, once per ACK that acknowledged
    /// `bytes_acked > 0` and carried a delay sample. `min_rtt` is the
    /// youngest round trip among the packets it acknowledged (µs).
    ///
    /// `our_delay = min(current delay, min_rtt)`;
    /// `off_target = (target − our_delay) / target`;
    /// `window_factor = min(bytes_acked, max_window) / max(max_window,
    /// bytes_acked)`; `max_window += 3000 · off_target · window_factor`
    /// (truncated to whole bytes as libutp's `size_t` cast does), at least
    /// [`MIN_WINDOW_SIZE`]. In slow start the window instead grows by
    /// `window_factor` packets if that is more, until it passes ssthresh or
    /// the delay passes 90 % of the target.
    pub(in super::super) fn apply_ccontrol(
        &mut self,
        now: Instant,
        bytes_acked: u64,
        min_rtt: u64,
    ) {
        let our_delay = self.delay.value().min(min_rtt) as f64;
        let target = duration_micros(self.config.target) as f64;
        let off_target = target - our_delay;
        let max_window = self.max_window as f64;
        let acked = bytes_acked as f64;
        let window_factor = acked.min(max_window) / acked.max(max_window);
        let delay_factor = off_target / target;
        let mut scaled_gain = MAX_CWND_INCREASE_BYTES_PER_RTT * window_factor * delay_factor;
        let maxed_out_recently = self
            .last_maxed_out
            .is_some_and(|t| duration_micros(now.saturating_since(t)) <= MAXED_OUT_RECENTLY_US);
        if scaled_gain > 0.0 && !maxed_out_recently {
            scaled_gain = 0.0;
        }
        let ledbat_cwnd = if max_window + scaled_gain < MIN_WINDOW_SIZE as f64 {
            MIN_WINDOW_SIZE
        } else {
            (max_window + scaled_gain) as u64
        };
        if self.slow_start {
            let ss_cwnd = (max_window + window_factor * self.packet_size() as f64) as u64;
            if ss_cwnd > self.ssthresh {
                self.slow_start = false;
            } else if our_delay > target * 0.9 {
                // libutp: "even if we're a little under the target delay,
                // we conservatively discontinue the slow start phase".
                self.slow_start = false;
                self.ssthresh = self.max_window;
            } else {
                self.max_window = ss_cwnd.max(ledbat_cwnd);
            }
        } else {
            self.max_window = ledbat_cwnd;
        }
        self.max_window = self.max_window.clamp(
            MIN_WINDOW_SIZE,
            self.config.send_buffer.max(MIN_WINDOW_SIZE),
        );
    }

    /// libutp `maybe_decay_win`: on loss the window halves (TCP's factor),
    /// at most once per [`MAX_WINDOW_DECAY`], not below
    /// [`MIN_WINDOW_SIZE`]; slow start ends with ssthresh at the new
    /// window.
    pub(in super::super) fn maybe_decay_win(&mut self, now: Instant) {
        if self
            .last_decay
            .is_some_and(|t| now.saturating_since(t) < MAX_WINDOW_DECAY)
        {
            return;
        }
        self.max_window = (self.max_window / 2).max(MIN_WINDOW_SIZE);
        self.last_decay = Some(now);
        self.slow_start = false;
        self.ssthresh = self.max_window;
        self.stats.decays += 1;
    }

    /// The timer expired (libutp `check_timeouts`). The timer doubles.
    /// With packets in flight, or a window too small for one packet, the
    /// window drops to one packet and slow start begins again; an idle
    /// connection's window only decays by a third. Every packet in flight
    /// is taken as lost (sent again as the window allows) and the oldest
    /// goes at once.
    pub(in super::super) fn on_rto(&mut self, now: Instant) {
        self.stats.timeouts += 1;
        self.rto.back_off();
        self.rto_deadline = Some(now + self.rto.timeout());
        self.dup_acks = 0;
        let in_flight = !self.outbuf.is_empty();
        let packet = self.packet_size();
        if !in_flight && self.max_window > packet {
            self.max_window = (self.max_window * 2 / 3).max(packet);
        } else {
            self.max_window = packet;
            self.slow_start = true;
        }
        for q in self.outbuf.values_mut() {
            if q.transmissions > 0 && !q.need_resend {
                q.need_resend = true;
                self.cur_window -= u64::from(q.len);
            }
        }
        if let Some(oldest) = self.outbuf.keys().next().copied() {
            self.resend_now.push_back(oldest);
        } else if !self.has_waiting() && self.max_window <= packet {
            // Idle with nothing left to decay: libutp's timer would keep
            // firing to no effect, so the model stops it until data goes.
            self.rto_deadline = None;
        }
    }
}
