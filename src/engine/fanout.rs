//! A small fan-out of observers: the live display, the load, a checkpoint
//! writer... each gets every call, in order; the run stops when any of
//! them asks. Lets `measure` compose what follows a run without mixing
//! concerns in one observer.

use super::run::{Control, Observer, RunView};

/// Observers called in order.
#[derive(Default)]
pub struct Fanout<'a> {
    observers: Vec<&'a mut dyn Observer>,
}

impl<'a> Fanout<'a> {
    pub fn new() -> Fanout<'a> {
        Fanout {
            observers: Vec::new(),
        }
    }

    pub fn push(&mut self, o: &'a mut dyn Observer) {
        self.observers.push(o);
    }
}

impl Observer for Fanout<'_> {
    fn warning(&mut self, message: &str) {
        for o in &mut self.observers {
            o.warning(message);
        }
    }

    fn started(&mut self, view: &RunView) {
        for o in &mut self.observers {
            o.started(view);
        }
    }

    fn tick(&mut self, view: &RunView) -> Control {
        let mut c = Control::Continue;
        for o in &mut self.observers {
            if o.tick(view) == Control::Stop {
                c = Control::Stop;
            }
        }
        c
    }
}
