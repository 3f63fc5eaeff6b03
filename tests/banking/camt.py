#!/usr/bin/env python3
"""What an ISO 20022 camt.053 or camt.054 file says, as the schema itself decodes it.

    python3 tests/banking/camt.py FILE

validates FILE against the XSD of its namespace (vendored beside this script, see
SOURCE.txt) with PyPI's xmlschema, decodes it with the same schema, and prints one JSON
array, one element per booked entry (Sts BOOK) in file order:

    [booking date, signed amount ("-" for debits), remittance text, creditor reference,
     counterparty name, counterparty IBAN]

where the remittance text is the entry's unstructured remittance lines (RmtInf/Ustrd)
joined with one space, else its AddtlNtryInf; the creditor reference is the first
RmtInf/Strd/CdtrRefInf/Ref; the counterparty is the debtor of a credit and the creditor
of a debit (RltdPties); null where the file gives none. Exits 1 with xmlschema's message
when the file is not valid.
"""

import json
import os
import sys

import xmlschema

HERE = os.path.dirname(os.path.abspath(__file__))
PREFIX = "urn:iso:std:iso:20022:tech:xsd:"


def listed(value):
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def name_of(party):
    """A party's name, in 001.02's `Dbtr/Nm` or 001.08's `Dbtr/Pty/Nm`."""
    if not party:
        return None
    return party.get("Nm") or (party.get("Pty") or {}).get("Nm")


def status(entry):
    sts = entry.get("Sts")
    return sts.get("Cd") if isinstance(sts, dict) else sts


def day(element):
    element = element or {}
    return element.get("Dt") or (element.get("DtTm") or "")[:10] or None


def decode(entry):
    amount = str(entry["Amt"]["$"])
    debit = entry["CdtDbtInd"] == "DBIT"
    texts, reference, name, iban = [], None, None, None
    for details in listed(entry.get("NtryDtls")):
        for tx in listed(details.get("TxDtls")):
            remittance = tx.get("RmtInf") or {}
            texts += [line.strip() for line in listed(remittance.get("Ustrd"))]
            for structured in listed(remittance.get("Strd")):
                ref = (structured.get("CdtrRefInf") or {}).get("Ref")
                reference = reference or ref
            parties = tx.get("RltdPties") or {}
            party, account = ("Cdtr", "CdtrAcct") if debit else ("Dbtr", "DbtrAcct")
            name = name or name_of(parties.get(party))
            iban = iban or ((parties.get(account) or {}).get("Id") or {}).get("IBAN")
    text = " ".join(texts) or (entry.get("AddtlNtryInf") or "").strip()
    booked = day(entry.get("BookgDt")) or day(entry.get("ValDt"))
    return [booked, ("-" if debit else "") + amount, text, reference, name, iban]


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    path = sys.argv[1]
    namespace = xmlschema.XMLResource(path).namespace
    if not namespace.startswith(PREFIX):
        sys.exit(f"{path}: not an ISO 20022 document ({namespace!r})")
    schema = xmlschema.XMLSchema(os.path.join(HERE, namespace[len(PREFIX):] + ".xsd"))
    try:
        schema.validate(path)
    except xmlschema.XMLSchemaValidationError as error:
        sys.exit(f"{path}: not valid against its schema: {error.reason} at {error.path}")
    document = schema.to_dict(path, decimal_type=str)
    message = document.get("BkToCstmrStmt") or document.get("BkToCstmrDbtCdtNtfctn")
    reports = listed(message.get("Stmt")) + listed(message.get("Ntfctn"))
    entries = [e for report in reports for e in listed(report.get("Ntry")) if status(e) == "BOOK"]
    print(json.dumps([decode(entry) for entry in entries], ensure_ascii=False))


if __name__ == "__main__":
    main()
