//! What makes a PDF a Factur-X / ZUGFeRD invoice: its XML embedded as `factur-x.xml`, an
//! associated file of relationship `Alternative` (krilla writes both, and PDF/A-3b), and the
//! Factur-X properties in its XMP metadata with their PDF/A extension schema. krilla writes
//! no custom XMP, so the last is added after it writes, with lopdf.

use krilla::Data;
use krilla::embed::{AssociationKind, EmbeddedFile, MimeType};
use krilla::metadata::DateTime;
use lopdf::{Document, Object};

/// The name Factur-X gives the embedded XML.
const FILE_NAME: &str = "factur-x.xml";
const NAMESPACE: &str = "urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#";
/// The properties the Factur-X XMP carries, and what each means.
const PROPERTIES: [(&str, &str, &str); 4] = [
    ("DocumentType", "INVOICE", "The type of the hybrid document: INVOICE"),
    ("DocumentFileName", FILE_NAME, "The name of the embedded XML invoice"),
    ("Version", "1.0", "The version of the Factur-X XML schema"),
    ("ConformanceLevel", "EN 16931", "The conformance level of the embedded XML: its profile"),
];

/// A document's issue date (`YYYY-MM-DD`) as krilla dates metadata.
pub(super) fn issue_date(day: &str) -> anyhow::Result<DateTime> {
    let date = chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d")
        .map_err(|error| anyhow::anyhow!("the issue date {day:?} is not a date: {error}"))?;
    let number = |value: u32| u8::try_from(value).unwrap_or(1);
    let year = u16::try_from(chrono::Datelike::year(&date)).unwrap_or(1970);
    Ok(DateTime::new(year)
        .month(number(chrono::Datelike::month(&date)))
        .day(number(chrono::Datelike::day(&date))))
}

/// `xml` as the PDF's `factur-x.xml`.
pub(super) fn embedded(xml: &str, modified: DateTime) -> EmbeddedFile {
    EmbeddedFile {
        path: FILE_NAME.to_owned(),
        mime_type: MimeType::new("text/xml"),
        description: Some("Factur-X invoice (EN 16931)".to_owned()),
        association_kind: AssociationKind::Alternative,
        data: Data::from(xml.as_bytes().to_vec()),
        modification_date: Some(modified),
        compress: Some(true),
        location: None,
    }
}

/// The Factur-X properties and their extension schema, as `rdf:Description`s.
fn facturx_descriptions() -> String {
    use std::fmt::Write as _;
    let mut values = String::new();
    let mut schema = String::new();
    for (name, value, description) in PROPERTIES {
        // Writing into a String cannot fail.
        let _ = write!(values, "<fx:{name}>{value}</fx:{name}>");
        let _ = write!(
            schema,
            "<rdf:li rdf:parseType=\"Resource\"><pdfaProperty:name>{name}</pdfaProperty:name>\
             <pdfaProperty:valueType>Text</pdfaProperty:valueType>\
             <pdfaProperty:category>external</pdfaProperty:category>\
             <pdfaProperty:description>{description}</pdfaProperty:description></rdf:li>"
        );
    }
    format!(
        "<rdf:Description rdf:about=\"\" xmlns:fx=\"{NAMESPACE}\">{values}</rdf:Description>\
         <rdf:Description rdf:about=\"\" xmlns:pdfaExtension=\"http://www.aiim.org/pdfa/ns/extension/\" \
         xmlns:pdfaSchema=\"http://www.aiim.org/pdfa/ns/schema#\" \
         xmlns:pdfaProperty=\"http://www.aiim.org/pdfa/ns/property#\">\
         <pdfaExtension:schemas><rdf:Bag><rdf:li rdf:parseType=\"Resource\">\
         <pdfaSchema:schema>Factur-X PDFA Extension Schema</pdfaSchema:schema>\
         <pdfaSchema:namespaceURI>{NAMESPACE}</pdfaSchema:namespaceURI>\
         <pdfaSchema:prefix>fx</pdfaSchema:prefix>\
         <pdfaSchema:property><rdf:Seq>{schema}</rdf:Seq></pdfaSchema:property>\
         </rdf:li></rdf:Bag></pdfaExtension:schemas></rdf:Description>"
    )
}

/// `pdf` with the Factur-X properties added to its XMP metadata, which stays unfiltered as
/// PDF/A asks. The rest of the file is kept; the same input makes the same output.
pub(super) fn with_facturx_metadata(pdf: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut document = Document::load_mem(pdf)?;
    let metadata = document.catalog()?.get(b"Metadata")?.as_reference()?;
    let Object::Stream(stream) = document.get_object_mut(metadata)? else {
        anyhow::bail!("the catalog's /Metadata is not a stream");
    };
    if stream.dict.has(b"Filter") {
        anyhow::bail!("krilla compressed the XMP metadata");
    }
    let xmp = String::from_utf8(stream.content.clone())?;
    let end = xmp.rfind("</rdf:RDF>").ok_or_else(|| anyhow::anyhow!("the XMP metadata has no rdf:RDF"))?;
    let with_facturx = format!("{}{}{}", &xmp[..end], facturx_descriptions(), &xmp[end..]);
    stream.set_content(with_facturx.into_bytes());
    let mut out = Vec::with_capacity(pdf.len() + 4096);
    document.save_to(&mut out)?;
    Ok(out)
}
