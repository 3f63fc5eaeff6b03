"""Checks e-invoices by the official rules, offline: the XSD (lxml), the CEN EN 16931
validation stylesheets and, for XRechnung, KoSIT's XRechnung Schematron with the Peppol BIS
Billing rules KoSIT merges into its release, for Peppol BIS Billing 3.0 OpenPeppol's own
Schematron with the CEN rules it bundles (Saxon-HE through saxonche), and for a Factur-X
PDF the factur-x library and pikepdf.

    python3 tests/einvoice/check.py FILE...     each file by what it is; exit 1 on a failure
    python3 tests/einvoice/check.py --warnings FILE...   also list the warnings (never failing)
    python3 tests/einvoice/check.py --self-test KoSIT's samples pass, broken ones fail

What a file is comes from itself: a PDF is a Factur-X PDF; an XML file's root names UBL
(`Invoice`, `CreditNote`) or CII, and its specification identifier (BT-24) XRechnung, Peppol
BIS Billing 3.0 or plain EN 16931 (Factur-X). A file fails on any XSD error and on any failed assertion or
report of the rules flagged `fatal` or `error` (or not flagged at all).

The rules are vendored in tests/einvoice/rules (see its README for sources and licences).
"""

from __future__ import annotations

import io
import re
import shutil
import sys
import tempfile
from pathlib import Path

from lxml import etree
from saxonche import PySaxonProcessor

HERE = Path(__file__).resolve().parent
RULES = HERE / "rules"
SAMPLES = HERE / "samples"
XRECHNUNG = "urn:xeinkauf.de:kosit:xrechnung_3.0"
PEPPOL = "urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0"
SVRL = "{http://purl.oclc.org/dsdl/svrl}"
UBL_ROOTS = {
    "{urn:oasis:names:specification:ubl:schema:xsd:Invoice-2}Invoice": "UBL-Invoice-2.1.xsd",
    "{urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2}CreditNote": "UBL-CreditNote-2.1.xsd",
}
CII_ROOT = "{urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100}CrossIndustryInvoice"
FAILING_FLAGS = {"fatal", "error", None}
# Set by --warnings: list the assertions flagged `warning` too, without failing on them.
SHOW_WARNINGS = False


class Checker:
    """Compiles each stylesheet once and checks any number of files with it."""

    def __init__(self) -> None:
        self.saxon = PySaxonProcessor(license=False)
        self.xslt = self.saxon.new_xslt30_processor()
        self.stylesheets: dict[str, object] = {}
        self.schemas: dict[Path, etree.XMLSchema] = {}
        self.compiled = Path(tempfile.mkdtemp(prefix="einvoice-rules-"))
        # The ids of the warnings of the last file checked.
        self.warnings: list[str] = []

    def schema(self, path: Path) -> etree.XMLSchema:
        if path not in self.schemas:
            self.schemas[path] = etree.XMLSchema(etree.parse(str(path)))
        return self.schemas[path]

    def stylesheet(self, name: str, path: Path):
        """A compiled XSLT; a Schematron (`.sch`) is first compiled by SchXslt, as KoSIT does."""
        if name not in self.stylesheets:
            if path.suffix == ".sch":
                pipeline = self.xslt.compile_stylesheet(
                    stylesheet_file=str(RULES / "schxslt" / "pipeline-for-svrl.xsl")
                )
                target = self.compiled / f"{name}.xsl"
                pipeline.transform_to_file(source_file=str(path), output_file=str(target))
                path = target
            self.stylesheets[name] = self.xslt.compile_stylesheet(stylesheet_file=str(path))
        return self.stylesheets[name]

    def xrechnung(self, syntax: str) -> Path:
        """KoSIT's XRechnung Schematron as KoSIT releases it: the Peppol BIS Billing rules it
        lists (src/xsl/rule-list.xml) merged in by its own stylesheet (peppol-into-xr.xsl),
        beside its common.sch."""
        upper = syntax.upper()
        target = self.compiled / "xrechnung" / syntax / f"XRechnung-{upper}-validation.sch"
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(RULES / "xrechnung" / "common.sch", target.parent.parent / "common.sch")
            merge = self.xslt.compile_stylesheet(
                stylesheet_file=str(RULES / "xrechnung" / "src" / "xsl" / "peppol-into-xr.xsl")
            )
            merge.set_parameter("syntax", self.saxon.make_string_value(upper))
            source = RULES / "xrechnung" / syntax / f"XRechnung-{upper}-validation.sch"
            merge.transform_to_file(source_file=str(source), output_file=str(target))
        return target

    def rules(self, name: str, path: Path, xml: bytes) -> list[str]:
        """The failed assertions and reports of one rule set that fail a file."""
        document = self.saxon.parse_xml(xml_text=xml.decode("utf-8"))
        report = self.stylesheet(name, path).transform_to_string(xdm_node=document)
        failures = []
        for node in etree.fromstring(report.encode("utf-8")).iter(
            f"{SVRL}failed-assert", f"{SVRL}successful-report"
        ):
            flag = node.get("flag")
            text = " ".join("".join(node.itertext()).split())
            if flag in FAILING_FLAGS:
                failures.append(f"{name} {node.get('id', '?')} [{flag}] at {node.get('location')}: {text}")
            else:
                self.warnings.append(node.get("id", "?"))
                if SHOW_WARNINGS:
                    print(f"     warning {name} {node.get('id', '?')}: {text[:160]}")
        return failures

    def xml(self, xml: bytes) -> list[str]:
        """The failures of an XML e-invoice: its XSD, the EN 16931 rules and, for XRechnung,
        KoSIT's."""
        root = etree.fromstring(xml)
        if root.tag in UBL_ROOTS:
            syntax, schema = "ubl", RULES / "xsd" / "ubl" / "maindoc" / UBL_ROOTS[root.tag]
        elif root.tag == CII_ROOT:
            syntax, schema = "cii", RULES / "xsd" / "cii" / "CrossIndustryInvoice_100pD16B.xsd"
        else:
            return [f"not an e-invoice: its root is {root.tag}"]
        failures = [f"XSD: {error.message} (line {error.line})" for error in self.xsd_errors(schema, root)]
        upper = syntax.upper()
        if syntax == "ubl" and specification_of(root) == PEPPOL:
            # As OpenPeppol validates: its own rules beside the CEN rules it bundles.
            peppol = RULES / "peppol"
            failures += self.rules("CEN-EN16931-UBL (Peppol)", peppol / "CEN-EN16931-UBL.sch", xml)
            return failures + self.rules("PEPPOL-EN16931-UBL", peppol / "PEPPOL-EN16931-UBL.sch", xml)
        failures += self.rules(f"EN16931-{upper}", RULES / "cen" / syntax / f"EN16931-{upper}-validation.xslt", xml)
        if XRECHNUNG in specification_of(root):
            failures += self.rules(f"XRechnung-{upper}", self.xrechnung(syntax), xml)
        elif syntax == "cii":
            failures += self.facturx_xsd(xml)
        return failures

    def xsd_errors(self, schema: Path, root) -> list:
        validator = self.schema(schema)
        return [] if validator.validate(root) else list(validator.error_log)

    @staticmethod
    def facturx_xsd(xml: bytes) -> list[str]:
        """Factur-X's own XSD of its EN 16931 profile, through the factur-x library."""
        import facturx

        try:
            facturx.xml_check_xsd(xml, flavor="factur-x", level="en16931")
        except Exception as error:  # the library raises a bare Exception on invalid XML
            return [f"Factur-X XSD: {error}"]
        return []

    def pdf(self, data: bytes) -> list[str]:
        """A Factur-X PDF: its structure, then its embedded XML as any Factur-X XML."""
        import facturx
        import pikepdf

        failures = pdf_tool_failures(data)
        with pikepdf.open(io.BytesIO(data)) as pdf:
            failures += pdfa3_failures(pdf)
        name, xml = facturx.get_xml_from_pdf(data, check_xsd=True)
        if name != "factur-x.xml":
            return failures + [f"the embedded XML is named {name!r}, not 'factur-x.xml'"]
        if facturx.get_level(etree.fromstring(xml)) != "en16931":
            failures.append("the embedded XML is not of the EN 16931 profile")
        return failures + self.xml(xml)

    def check(self, path: Path) -> list[str]:
        self.warnings = []
        data = path.read_bytes()
        return self.pdf(data) if data.startswith(b"%PDF-") else self.xml(data)


def specification_of(root) -> str:
    """BT-24 of a UBL or CII invoice."""
    for element in root.iter(
        "{urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2}CustomizationID",
        "{urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100}ID",
    ):
        if element.tag.endswith("CustomizationID") or element.getparent().tag.endswith(
            "GuidelineSpecifiedDocumentContextParameter"
        ):
            return element.text or ""
    return ""


def pdf_tool_failures(data: bytes) -> list[str]:
    """qpdf's structural check, and pdffonts: every font embedded, as PDF/A requires."""
    import subprocess

    with tempfile.NamedTemporaryFile(suffix=".pdf") as file:
        file.write(data)
        file.flush()
        failures = []
        qpdf = subprocess.run(["qpdf", "--check", file.name], capture_output=True, text=True)
        if qpdf.returncode != 0:
            failures.append(f"qpdf --check: {qpdf.stdout.strip()} {qpdf.stderr.strip()}")
        fonts = subprocess.run(["pdffonts", file.name], capture_output=True, text=True, check=True)
        # name, type (may hold spaces), encoding, then the emb, sub, uni and object columns.
        rows = fonts.stdout.splitlines()[2:]
        if not rows:
            failures.append("pdffonts lists no font")
        for row in rows:
            if row.split()[-5] != "yes":
                failures.append(f"a font is not embedded: {row}")
        return failures


def pdfa3_failures(pdf) -> list[str]:
    """What a Factur-X PDF/A-3B must carry that pikepdf can see: the PDF/A identification
    in its XMP, the Factur-X XMP, an output intent, and `factur-x.xml` as an associated
    file (`/AF`) with relationship `Alternative` and subtype `text/xml`."""
    failures = []
    meta = pdf.open_metadata()
    if meta.get("pdfaid:part") != "3" or meta.get("pdfaid:conformance") != "B":
        failures.append(f"XMP: not PDF/A-3B ({meta.get('pdfaid:part')}/{meta.get('pdfaid:conformance')})")
    xmp = str(pdf.Root.Metadata.read_bytes(), "utf-8")
    for field, value in [("DocumentType", "INVOICE"), ("DocumentFileName", "factur-x.xml"),
                         ("Version", "1.0"), ("ConformanceLevel", "EN 16931")]:
        if not re.search(rf"fx:{field}>\s*{re.escape(value)}\s*<", xmp):
            failures.append(f"XMP: fx:{field} is not {value}")
    if "/OutputIntents" not in pdf.Root or len(pdf.Root.OutputIntents) == 0:
        failures.append("no /OutputIntents")
    files = [spec for spec in pdf.Root.get("/AF", []) if str(spec.get("/F")) == "factur-x.xml"]
    if not files:
        return failures + ["the catalog's /AF does not name factur-x.xml"]
    spec = files[0]
    if str(spec.get("/AFRelationship")) != "/Alternative":
        failures.append(f"factur-x.xml's AFRelationship is {spec.get('/AFRelationship')}")
    if str(spec.EF.F.get("/Subtype")) != "/text/xml":
        failures.append(f"factur-x.xml's subtype is {spec.EF.F.get('/Subtype')}")
    return failures


def self_test(checker: Checker) -> int:
    """KoSIT's sample invoices pass; the same with their buyer reference (BT-10) taken out
    or a total changed fail, and with a line's amount changed draw the warning of the Peppol
    rule KoSIT merges in (PEPPOL-EN16931-R120), so the pipeline is shown to both pass and
    fail, the merged rules included."""
    bad = 0
    samples = sorted(SAMPLES.glob("*.xml"))
    for sample in samples:
        failures = checker.check(sample)
        print(f"{'ok  ' if not failures else 'FAIL'} {sample.name}")
        for failure in failures:
            print(f"     {failure}")
        bad += bool(failures)
        broken = re.sub(rb"<cbc:BuyerReference>[^<]*</cbc:BuyerReference>|<ram:BuyerReference>[^<]*</ram:BuyerReference>",
                        b"", sample.read_bytes())
        broken = re.sub(rb"(<(cbc:TaxInclusiveAmount|ram:GrandTotalAmount)[^>]*>)([0-9.]+)", rb"\g<1>1\3", broken)
        failures = checker.xml(broken)
        ids = {failure.split()[1] for failure in failures}
        if not {"BR-DE-15", "BR-CO-15"} <= ids:
            print(f"FAIL {sample.name} without BT-10 and with a wrong total is not refused: {sorted(ids)}")
            bad += 1
        # The first line's amount one unit more than its quantity times its price.
        line = rb"(<(cac:InvoiceLine|ram:IncludedSupplyChainTradeLineItem)>.*?<(cbc:LineExtensionAmount|ram:LineTotalAmount)[^>]*>)([0-9]+)"
        mispriced = re.sub(line, lambda m: m.group(1) + str(int(m.group(4)) + 1).encode(), sample.read_bytes(), count=1, flags=re.S)
        checker.warnings = []
        checker.xml(mispriced)
        if "PEPPOL-EN16931-R120" not in checker.warnings:
            print(f"FAIL {sample.name} with a line's amount changed draws no PEPPOL-EN16931-R120: {checker.warnings}")
            bad += 1
    print(f"{len(samples) - bad} of {len(samples)} samples behave")
    return 1 if bad + peppol_self_test(checker) else 0


def peppol_self_test(checker: Checker) -> int:
    """OpenPeppol's examples pass its rules; without the seller's electronic address (BT-34)
    they fail PEPPOL-EN16931-R020, and with a total changed BR-CO-15."""
    bad = 0
    samples = sorted((SAMPLES / "peppol").glob("*.xml"))
    for sample in samples:
        failures = checker.check(sample)
        print(f"{'ok  ' if not failures else 'FAIL'} peppol/{sample.name}")
        for failure in failures:
            print(f"     {failure}")
        bad += bool(failures)
        supplier = rb"(<cac:AccountingSupplierParty>\s*<cac:Party>\s*)<cbc:EndpointID[^>]*>[^<]*</cbc:EndpointID>"
        broken = re.sub(supplier, rb"\g<1>", sample.read_bytes(), count=1)
        broken = re.sub(rb"(<cbc:TaxInclusiveAmount[^>]*>)([0-9.]+)", rb"\g<1>1\2", broken)
        failures = checker.xml(broken)
        expected = {"PEPPOL-EN16931-R020", "BR-CO-15"}
        found = {rule for rule in expected if any(f" {rule} [" in failure for failure in failures)}
        if found != expected:
            print(f"FAIL peppol/{sample.name} without BT-34 and with a wrong total is not refused: {failures[:5]}")
            bad += 1
    print(f"{len(samples) - bad} of {len(samples)} Peppol samples behave")
    return bad


def main(arguments: list[str]) -> int:
    global SHOW_WARNINGS
    if arguments[:1] == ["--warnings"]:
        SHOW_WARNINGS, arguments = True, arguments[1:]
    checker = Checker()
    if arguments == ["--self-test"]:
        return self_test(checker)
    if not arguments:
        print(__doc__)
        return 2
    bad = 0
    for argument in arguments:
        failures = checker.check(Path(argument))
        print(f"{'ok  ' if not failures else 'FAIL'} {argument}")
        for failure in failures:
            print(f"     {failure}")
        bad += bool(failures)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
