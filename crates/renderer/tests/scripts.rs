//! Invoices in every script, read back as a user's tools read them: `pdftotext` must read
//! the same text from billable's PDF as from headless Chromium's PDF of the same strings,
//! and the multilingual sample invoice must look as its golden image does.
//!
//! Needs poppler-utils, chromium and the Noto fonts (fonts-noto-core, fonts-noto-cjk),
//! which `make test` installs.

#![expect(clippy::unwrap_used, clippy::print_stdout, reason = "tests")]

mod support;

use std::path::PathBuf;

use renderer::{SCRIPT_SAMPLES, multilingual_document, render_pdf};
use support::{TempFile, assert_valid, chromium_pdf, run_on, text_lines};

/// The samples as an HTML page, one paragraph each, in the invoice's font, each paragraph
/// taking its direction from its text as the invoice's descriptions do.
fn samples_html() -> String {
    let paragraphs = SCRIPT_SAMPLES.map(|(_, text)| format!("<p dir=\"auto\">{text}</p>")).join("\n");
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><style>\
         body {{ font-family: \"DejaVu Sans\", sans-serif; font-size: 10pt }}</style></head>\
         <body>\n{paragraphs}</body></html>"
    )
}

#[test]
fn every_script_reads_as_it_does_in_chromiums_pdf() {
    let chromium = text_lines(&chromium_pdf(&samples_html()));
    assert_eq!(chromium.len(), SCRIPT_SAMPLES.len(), "one line per sample from Chromium: {chromium:#?}");

    let document = multilingual_document(SCRIPT_SAMPLES.len(), false);
    let pdf = render_pdf(&document).unwrap();
    assert_valid(&pdf);
    let billable = text_lines(&pdf);
    for ((script, text), expected) in SCRIPT_SAMPLES.iter().zip(&chromium) {
        assert!(
            billable.contains(expected),
            "{script}: Chromium's PDF reads {expected:?} for {text:?}; billable's reads:\n{billable:#?}"
        );
    }
}

/// A PNG decoded to 8-bit grey pixels, with its width and height.
fn grey_pixels(png: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut decoder = png::Decoder::new(png);
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut buffer).unwrap();
    let channels = frame.color_type.samples();
    let pixels = buffer[..frame.buffer_size()].chunks(channels).map(|pixel| pixel[0]).collect();
    (frame.width, frame.height, pixels)
}

/// The first page of `pdf` as a grey PNG at 72 dpi.
fn first_page_png(pdf: &[u8]) -> Vec<u8> {
    let file = TempFile::new("pdf", pdf);
    run_on("pdftoppm", &["-png", "-gray", "-r", "72", "-singlefile", "-f", "1", "-l", "1"], &file.0, &[])
}

/// Pixels whose grey differs by more than this count as different; fewer than
/// `GOLDEN_TOLERANCE` of them may differ (the anti-aliasing of other versions of poppler).
const GOLDEN_LEVELS: u8 = 64;
const GOLDEN_TOLERANCE: usize = 120;

#[test]
fn the_multilingual_invoice_looks_as_its_golden_image() {
    let golden_path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/multilingual-invoice.png");
    let actual = first_page_png(&render_pdf(&multilingual_document(12, true)).unwrap());
    if std::env::var_os("BILLABLE_UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden_path, &actual).unwrap();
        println!("wrote {}", golden_path.display());
    }
    let golden = std::fs::read(&golden_path).unwrap();
    let (width, height, expected) = grey_pixels(&golden);
    let (actual_width, actual_height, drawn) = grey_pixels(&actual);
    assert_eq!((actual_width, actual_height), (width, height), "page size");
    let different = expected.iter().zip(&drawn).filter(|(a, b)| a.abs_diff(**b) > GOLDEN_LEVELS).count();
    if different > GOLDEN_TOLERANCE {
        let kept = std::env::temp_dir().join("billable-multilingual-invoice.png");
        std::fs::write(&kept, &actual).unwrap();
        panic!(
            "{different} pixels differ from {} (at most {GOLDEN_TOLERANCE} may); the page drawn now is \
             {}. If the change is intended, run the test with BILLABLE_UPDATE_GOLDEN=1.",
            golden_path.display(),
            kept.display()
        );
    }
}
