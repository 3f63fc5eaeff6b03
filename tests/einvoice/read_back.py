"""Reads e-invoices back with libraries of their own, independent of billable's writer: a
CII document (XRechnung CII, Factur-X) through drafthorse, and a Factur-X PDF through the
factur-x library, which extracts its XML for drafthorse to read.

    python3 tests/einvoice/read_back.py FILE...

Prints one JSON object per file, in order: `{"file", "groups": [[category, rate, basis,
tax], ...], "lineTotal", "allowanceTotal", "taxBasisTotal", "grandTotal"}`, each
figure as the document writes it (`null` where it has none).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from drafthorse.models.document import Document


def text(value) -> str | None:
    """A decimal as written, without trailing zeros (`19` for `19.00`), or None."""
    if value is None:
        return None
    return format(value.normalize(), "f")


def amount(element) -> str | None:
    """The figure of an amount element, with or without its currency."""
    return text(element._amount if hasattr(element, "_amount") else element._value)


def figures(xml: bytes) -> dict:
    document = Document.parse(xml)
    settlement = document.trade.settlement
    groups = [
        [tax.category_code._text, amount(tax.rate_applicable_percent), amount(tax.basis_amount),
         amount(tax.calculated_amount)]
        for tax in settlement.trade_tax.children
    ]
    summation = settlement.monetary_summation
    return {
        "groups": groups,
        "lineTotal": amount(summation.line_total),
        "allowanceTotal": amount(summation.allowance_total),
        "taxBasisTotal": amount(summation.tax_basis_total),
        "grandTotal": amount(summation.grand_total),
    }


def main(paths: list[str]) -> int:
    for name in paths:
        data = Path(name).read_bytes()
        if data.startswith(b"%PDF-"):
            import facturx

            _, data = facturx.get_xml_from_pdf(data, check_xsd=False)
        print(json.dumps({"file": name, **figures(data)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
