//! One observer made of several: every call goes to each part in order
//! (e.g. the live display, then the checkpoint writer), so that parts
//! stay ignorant of each other. Runs on the control thread only.

use super::run::{Control, Observer, RunView};

pub struct Fanout<'a> {
    parts: Vec<&'a mut dyn Observer>,
}

impl<'a> Fanout<'a> {
    pub fn new(parts: Vec<&'a mut dyn Observer>) -> Fanout<'a> {
        Fanout { parts }
    }
}

impl Observer for Fanout<'_> {
    fn warning(&mut self, message: &str) {
        for p in &mut self.parts {
            p.warning(message);
        }
    }

    fn started(&mut self, view: &RunView) {
        for p in &mut self.parts {
            p.started(view);
        }
    }

    /// Every part ticks; the run stops when any part asks.
    fn tick(&mut self, view: &RunView) -> Control {
        let mut control = Control::Continue;
        for p in &mut self.parts {
            if p.tick(view) == Control::Stop {
                control = Control::Stop;
            }
        }
        control
    }

    fn ended(&mut self) {
        for p in &mut self.parts {
            p.ended();
        }
    }

    fn notices(&mut self) -> Vec<String> {
        self.parts.iter_mut().flat_map(|p| p.notices()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Probe {
        warnings: Vec<String>,
        pending: Vec<String>,
    }

    impl Observer for Probe {
        fn warning(&mut self, m: &str) {
            self.warnings.push(m.to_string());
        }
        fn notices(&mut self) -> Vec<String> {
            std::mem::take(&mut self.pending)
        }
    }

    #[test]
    fn warnings_reach_every_part_and_notices_are_collected() {
        let mut a = Probe::default();
        let mut b = Probe {
            pending: vec!["checkpoint failed".into()],
            ..Default::default()
        };
        {
            let mut f = Fanout::new(vec![&mut a, &mut b]);
            f.warning("w");
            assert_eq!(f.notices(), vec!["checkpoint failed".to_string()]);
            assert!(f.notices().is_empty());
        }
        assert_eq!(a.warnings, vec!["w".to_string()]);
        assert_eq!(b.warnings, vec!["w".to_string()]);
    }
}
