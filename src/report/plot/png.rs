//! A figure as a PNG image (`rtscope plot -o x.png`): drawn into an RGB
//! buffer with the embedded font, encoded with the `png` crate. No system
//! font or image library is used.

use super::{Figure, PlotError, Size, draw};
use plotters::prelude::*;

/// The figure as PNG bytes.
pub fn render(fig: &Figure, size: Size) -> Result<Vec<u8>, PlotError> {
    let (w, h) = (size.width, size.height);
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        draw::draw(&root, fig)?;
    }
    let mut out = Vec::new();
    {
        let mut enc = ::png::Encoder::new(&mut out, w, h);
        enc.set_color(::png::ColorType::Rgb);
        enc.set_depth(::png::BitDepth::Eight);
        let mut writer = enc.write_header().map_err(PlotError::Png)?;
        writer.write_image_data(&rgb).map_err(PlotError::Png)?;
    }
    Ok(out)
}
