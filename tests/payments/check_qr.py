"""The oracle of billable's payment QR codes: they hold, byte for byte, what the reference
encoders make from the same data, and their payment references are valid.

    python3 tests/payments/check_qr.py --expect EXPECT.json [--pdf FILE.pdf] [--payload FILE]
                                       [--reference REF ...]

EXPECT.json names the format and its data:

    {"format": "swiss", "swiss": {"account", "creditor": {name, street, house_num, pcode,
        city, country}, "debtor": {…} or null, "amount" or null, "currency",
        "reference_number" or null, "additional_information"}}
    {"format": "epc", "epc": {"name", "iban", "amount", "reference", "bic", "encoding"}}

The reference payload is qrbill's `QRBill.qr_data()` encoded UTF-8 for the Swiss QR-bill, and
segno's EPC data builder (`segno.helpers._make_epc_qr_data`) for the EPC QR code, whose own
symbol is decoded once to show the oracle's round trip holds. `--payload`: the file holds
exactly those bytes. `--pdf`: every page is rasterised (pdftoppm, 300 dpi) and every QR code
on it decoded (zxing-cpp, raw bytes); the PDF holds exactly one QR code, and it is, byte for
byte, the reference payload. `--reference`: each is valid per python-stdnum (ISO 11649 for
"RF…", the Swiss QR reference for 27 digits). One line per check, "ok: …" or "FAIL: …";
exit 0 when every check passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import qrbill
import segno.helpers
import zxingcpp
from PIL import Image
from stdnum import iso11649
from stdnum.ch import esr


def swiss_payload(data: dict) -> bytes:
    """qrbill's QR-bill payload of `data`: coding 1, UTF-8 (Latin letters only)."""
    bill = qrbill.QRBill(
        account=data["account"],
        creditor=data["creditor"],
        debtor=data.get("debtor"),  # None: no debtor, seven empty lines
        amount=data.get("amount"),  # None: no amount
        currency=data["currency"],
        reference_number=data.get("reference_number"),  # None: type NON
        additional_information=data.get("additional_information") or "",  # qrbill needs a str
    )
    return bill.qr_data().encode("utf-8")


def epc_arguments(data: dict) -> dict:
    """The arguments of segno's EPC helpers for `data`."""
    return dict(name=data["name"], iban=data["iban"], amount=data["amount"], text=None,
                reference=data.get("reference"), bic=data.get("bic"), encoding=data.get("encoding"))


def epc_round_trip(data: dict, payload: bytes) -> tuple[bool, str]:
    """segno's own EPC symbol of `data`, drawn and decoded, is `payload`: the oracle holds."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "segno.png"
        segno.helpers.make_epc_qr(**epc_arguments(data)).save(path, scale=10, border=4)
        decoded = decode(Image.open(path))
    if decoded == [payload]:
        return True, "ok: segno's own EPC symbol decodes to segno's EPC data"
    return False, f"FAIL: segno's own EPC symbol decodes to {decoded!r}, not {payload!r}"


def decode(image: Image.Image) -> list[bytes]:
    """The raw bytes of every QR code in `image`."""
    results = zxingcpp.read_barcodes(image, formats=zxingcpp.BarcodeFormat.QRCode)
    return [bytes(result.bytes) for result in results]


def codes_in_pdf(pdf: Path) -> list[bytes]:
    """Every QR code on every page of `pdf`, rasterised at 300 dpi."""
    with tempfile.TemporaryDirectory() as directory:
        subprocess.run(["pdftoppm", "-r", "300", "-png", str(pdf), f"{directory}/page"], check=True)
        pages = sorted(Path(directory).glob("page*.png"))
        return [code for page in pages for code in decode(Image.open(page))]


def show(payload: bytes) -> str:
    """`payload` line by line as Python writes bytes, line endings included: a difference shows."""
    return "\n".join(f"    {line!r}" for line in payload.splitlines(keepends=True)) or "    b''"


def first_difference(given: bytes, expected: bytes) -> str:
    """Where `given` first leaves `expected`."""
    index = next((i for i, (a, b) in enumerate(zip(given, expected)) if a != b), min(len(given), len(expected)))
    return f"first difference at byte {index} (lengths {len(given)} and {len(expected)})"


def check_payload(path: Path, expected: bytes) -> tuple[bool, str]:
    """The file at `path` holds exactly `expected`."""
    given = path.read_bytes()
    if given == expected:
        return True, "ok: the payload is the reference encoder's"
    return False, (f"FAIL: the payload differs from the reference encoder's, {first_difference(given, expected)}\n"
                   f" given:\n{show(given)}\n reference:\n{show(expected)}")


def check_pdf(pdf: Path, expected: bytes) -> tuple[bool, str]:
    """The PDF holds one QR code, and it decodes to exactly `expected`."""
    found = codes_in_pdf(pdf)
    if found == [expected]:
        return True, "ok: the PDF's one QR code is the reference encoder's"
    listed = "\n".join(f"  code {n}:\n{show(code)}" for n, code in enumerate(found, 1)) or "    (none)"
    hint = f", {first_difference(found[0], expected)}" if len(found) == 1 else f", {len(found)} codes found"
    return False, (f"FAIL: the PDF's QR codes are not exactly the reference payload{hint}\n found:\n{listed}\n"
                   f" reference:\n{show(expected)}")


def check_reference(reference: str) -> tuple[bool, str]:
    """`reference` is a valid ISO 11649 creditor reference (RF…) or Swiss QR reference (27 digits)."""
    if reference.upper().startswith("RF"):
        kind, valid = "ISO 11649 creditor reference", iso11649.is_valid(reference)
    elif len(reference) == 27 and reference.isdigit():
        kind, valid = "Swiss QR reference", esr.is_valid(reference)
    else:
        kind, valid = "reference (neither RF… nor 27 digits)", False
    return valid, f"{'ok' if valid else 'FAIL'}: {reference!r} is {'a valid' if valid else 'no valid'} {kind}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--expect", required=True, type=Path, help="the JSON of the format and its data")
    parser.add_argument("--pdf", type=Path, help="a PDF whose one QR code must be the reference payload")
    parser.add_argument("--payload", type=Path, help="a file that must hold the reference payload")
    parser.add_argument("--reference", nargs="+", default=[], help="payment references stdnum must accept")
    options = parser.parse_args()
    expect = json.loads(options.expect.read_text(encoding="utf-8"))
    data = expect[expect["format"]]
    results = []
    try:
        if expect["format"] == "swiss":
            expected = swiss_payload(data)
        elif expect["format"] == "epc":
            expected = segno.helpers._make_epc_qr_data(**epc_arguments(data))
            results.append(epc_round_trip(data, expected))
        else:
            raise ValueError(f"format must be swiss or epc, not {expect['format']!r}")
    except ValueError as error:
        print(f"FAIL: the reference encoder refuses the data: {error}")
        return 1
    if options.payload:
        results.append(check_payload(options.payload, expected))
    if options.pdf:
        results.append(check_pdf(options.pdf, expected))
    results.extend(check_reference(reference) for reference in options.reference)
    for _, line in results:
        print(line)
    return 0 if all(passed for passed, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
