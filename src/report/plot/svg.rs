//! A figure as SVG text: standalone (`rtscope plot -o x.svg`) or inline
//! in the HTML report, where it scales to the page width. Same figure,
//! same bytes.

use super::{Figure, PlotError, Size, draw};
use crate::text::escape;
use plotters::prelude::*;

/// The figure as a standalone SVG document.
pub fn render(fig: &Figure, size: Size) -> Result<String, PlotError> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (size.width, size.height)).into_drawing_area();
        draw::draw(&root, fig)?;
    }
    Ok(out)
}

/// The figure as an `<svg>` element for an HTML page: scales with its
/// container (viewBox kept), described for screen readers.
pub fn render_inline(fig: &Figure, size: Size, id: &str) -> Result<String, PlotError> {
    let text = render(fig, size)?;
    let head = format!("<svg width=\"{}\" height=\"{}\" ", size.width, size.height);
    let body = text.strip_prefix(&head).ok_or(PlotError::SvgHeader)?;
    let title = escape::markup(&fig.title);
    let body = body.replacen('>', &format!("><title>{title}</title>"), 1);
    Ok(format!(
        "<svg id=\"{id}\" class=\"plot\" role=\"img\" aria-label=\"{title}\" preserveAspectRatio=\"xMidYMid meet\" {body}"
    ))
}
