"""The oracle of billable's payment QR codes: what the reference encoders make from the same
data, byte for byte.

    python3 tests/payments/check_qr.py --expect EXPECT.json [--pdf FILE.pdf] [--payload FILE]

EXPECT.json names the format and its data:

    {"format": "swiss", "swiss": {"account", "creditor": {name, street, house_num, pcode,
        city, country}, "debtor": {…} or null, "amount", "currency", "reference_number",
        "additional_information"}}
    {"format": "epc", "epc": {"name", "iban", "amount", "reference", "bic", "encoding"}}

The reference payload is qrbill's `QRBill.qr_data()` (UTF-8) for the Swiss QR-bill, segno's
EPC data builder for the EPC QR code (whose own symbol is decoded once, to show the oracle's
round trip). `--payload`: the file must hold exactly those bytes. `--pdf`: every page is
rasterised (pdftoppm, 300 dpi) and every QR code on it decoded (zxing-cpp, raw bytes); exactly
one must be, byte for byte, the reference payload. Exit 0 when every check passes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import qrbill
import segno
import segno.helpers
import zxingcpp
from PIL import Image


def reference_payload(expect: dict) -> bytes:
    """The bytes the reference encoder puts in the code of `expect`."""
    if expect["format"] == "swiss":
        data = expect["swiss"]
        bill = qrbill.QRBill(
            account=data["account"],
            creditor=data["creditor"],
            debtor=data.get("debtor"),
            amount=data.get("amount"),
            currency=data["currency"],
            reference_number=data.get("reference_number"),
            additional_information=data.get("additional_information") or "",
        )
        return bill.qr_data().encode("utf-8")
    data = expect["epc"]
    arguments = dict(
        name=data["name"],
        iban=data["iban"],
        amount=data["amount"],
        reference=data.get("reference"),
        bic=data.get("bic"),
        encoding=data.get("encoding"),
    )
    payload = segno.helpers._make_epc_qr_data(**arguments)
    # segno's own symbol of the same data decodes to the same bytes: the oracle holds.
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "segno.png"
        segno.helpers.make_epc_qr(**arguments).save(path, scale=10, border=4)
        decoded = decode(Image.open(path))
    if decoded != [payload]:
        raise SystemExit(f"FAIL: segno's own EPC symbol decodes to {decoded!r}, not {payload!r}")
    return payload


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
    """`payload` line by line, as Python writes bytes: a difference shows."""
    return "\n".join(f"    {line!r}" for line in payload.split(b"\n"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--expect", required=True, type=Path)
    parser.add_argument("--pdf", type=Path)
    parser.add_argument("--payload", type=Path)
    options = parser.parse_args()
    expected = reference_payload(json.loads(options.expect.read_text()))
    failed = False
    if options.payload:
        given = options.payload.read_bytes()
        if given == expected:
            print("ok: the payload is the reference encoder's")
        else:
            failed = True
            print(f"FAIL: the payload differs from the reference encoder's\n given:\n{show(given)}\n"
                  f" reference:\n{show(expected)}")
    if options.pdf:
        found = codes_in_pdf(options.pdf)
        if found.count(expected) == 1 and len(found) == 1:
            print("ok: the PDF's one QR code is the reference encoder's")
        else:
            failed = True
            listed = "\n".join(show(code) for code in found) or "    (none)"
            print(f"FAIL: the PDF's QR codes are not exactly the reference payload\n found:\n{listed}\n"
                  f" reference:\n{show(expected)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
