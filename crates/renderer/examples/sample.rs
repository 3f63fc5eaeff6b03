//! Writes the multilingual sample invoice (paid, 12 line items, one per script) as a PDF:
//! `cargo run -p renderer --example sample -- invoice-sample.pdf [items]`.
//! `docs/invoice-sample.png` is its first page: `pdftoppm -png -r 80 -singlefile`.

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let path = args.next().unwrap_or_else(|| "invoice-sample.pdf".to_owned());
    let items = args.next().map(|n| n.parse()).transpose()?.unwrap_or(12);
    std::fs::write(&path, renderer::render_pdf(&renderer::multilingual_document(items, true))?)?;
    eprintln!("wrote {path}");
    Ok(())
}
