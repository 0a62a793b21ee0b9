//! The font every figure is drawn with: DejaVu Sans, embedded in the
//! binary (assets/fonts, with its licence), registered with plotters as
//! "sans-serif" so text metrics never depend on the system's fonts and
//! PNG output needs no font library. Never reads a font from the system.

use super::PlotError;
use std::sync::OnceLock;

/// DejaVu Sans 2.37 (Debian fonts-dejavu-core), unmodified.
static DEJAVU_SANS: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

/// The family name figures use; SVG viewers fall back to their own sans.
pub const FAMILY: &str = "sans-serif";

/// Register the embedded font with plotters (once per process).
pub fn ensure() -> Result<(), PlotError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let registered = *REGISTERED.get_or_init(|| {
        use plotters::style::{FontStyle, register_font};
        [FontStyle::Normal, FontStyle::Bold]
            .into_iter()
            .all(|style| register_font(FAMILY, style, DEJAVU_SANS).is_ok())
    });
    if registered {
        Ok(())
    } else {
        Err(PlotError::Font)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_embedded_font_registers() {
        super::ensure().unwrap();
        super::ensure().unwrap();
    }
}
