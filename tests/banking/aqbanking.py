#!/usr/bin/env python3
"""A second opinion on a bank statement: what AqBanking's aqbanking-cli reads of it.

    python3 tests/banking/aqbanking.py FORMAT FILE        (FORMAT: mt940 or camt.053)

prints one JSON array to stdout, one element per transaction, in the order AqBanking
lists them (the file's order; AqBanking groups by account, and each fixture has one):

    [["2026-11-20", "1190.00", "Rechnung INV-0001"], ["2026-11-20", "-28.50", "..."]]

  date     the booking date (AqBanking's "date"), YYYY-MM-DD; where AqBanking has none,
           its value date ("valutaDate"), as aqbanking-cli's own dateOrValutaDate does.
  amount   exact, from AqBanking's rational value ("-2850/100:EUR"), as a plain decimal
           with at least two places and "-" for debits ("-28.50").
  purpose  AqBanking's purpose (Verwendungszweck), its lines stripped and joined with
           single spaces, empty ones left out ("" where it has none).

It exits 1 with a message on stderr when aqbanking-cli is missing or refuses the file
(or, for camt.053, when FILE is no camt.053 document: AqBanking would read nothing from
it and say nothing), and 2 on wrong arguments. Only the standard library is used.

Tested with Debian's aqbanking-tools 6.5.3-1 (aqbanking-cli "version 6.5.3", libaqbanking44
6.5.3-1, libgwenhywfar79 5.10.1-2), installed with
    apt-get install aqbanking-tools

How it runs aqbanking-cli, in a temporary folder that is removed afterwards, with no bank,
user or account set up (an import needs none):

    aqbanking-cli -n -D TMP/cfg import --importer=swift --profile=SWIFT-MT940 -c TMP/ctx -f FILE
    aqbanking-cli -n -D TMP/cfg import --importer=xml --profile=camt_053_001_04 -c TMP/ctx -f FILE
    aqbanking-cli -n -D TMP/cfg listtrans -c TMP/ctx -T '<RS>$(date)<US>$(valutaDate)<US>$(value)<US>$(purpose)<US>'

(RS/US are the ASCII record and unit separators, 0x1E and 0x1F.) AqBanking looks for an
old configuration under the user's passwd home whatever -D and HOME say, and creates the
empty folders ~/.aqbanking/settings and ~/.aqbanking/settings6 doing so; where
~/.aqbanking did not exist before, this script removes those again if they are still empty.

How AqBanking 6.5.3 builds a purpose, so that a caller knows what to compare
(src/libs/plugins/parsers/swift/swift940_61.c, swift940_86.c, swift.c;
imexporters/xml/data/camt_053_001_04.xml):

MT940, profile SWIFT-MT940 (the generic one; "fints940" differs only in not reading :61:'s
  supplementary line and in dating an entry without an entry date by its balance):
  * :61: gives the value date and, where present, the entry date (MMDD, year taken from
    the value date) as the booking date; without an entry date the value date is used.
  * :61:'s supplementary-details line (after the bank reference, e.g. ING's
    "/TRCD/00100/") becomes the FIRST purpose line.
  * A structured :86: ("NNN?00...", NNN a 3-digit code): the subfields ?20-?29 and
    ?60-?63 are the purpose parts; a line break inside a subfield (even between "?" and
    its number) is dropped without a space. ?00 is the posting text, ?30/?31 the remote
    bank code (BIC) and account (IBAN), ?32+?33 the remote name; none of them is purpose.
    - Code below 900 (SEPA): the parts are concatenated WITHOUT any separator and
      searched for the keywords EREF+ KREF+ MREF+ CRED+ DEBT+ SVWZ+ ABWA+ ABWE+. If any
      keyword has a value, the purpose becomes the SVWZ+ value alone, keyword dropped
      and blanks at its ends trimmed ("?21SVWZ+Rechnung INV-0002 vom ?2215.11.2026"
      gives "Rechnung INV-0002 vom 15.11.2026"); EREF+ goes to the end-to-end reference,
      MREF+ to the mandate, CRED+ to the creditor id. With keywords but no SVWZ+, the
      text before the first keyword is the purpose. With no keyword at all, each
      subfield stays a line of its own (so here they are joined with one space, where
      mt-940 and a plain concatenation put none).
    - Code 900 or above: each subfield is a line of its own, no keyword handling.
  * An unstructured :86: (Dutch /EREF/.../REMI/... slashes, UK free text): each
    physical line is a purpose line, so a line that the bank cut mid-word at 65
    characters comes out with a space in the word ("Jansen Webdes ign BV"). The slash
    keys are not interpreted.
  * Every character below 0x20 inside a value becomes a space; bytes 0x80-0xFF are taken
    as ISO-8859-1 unless they already form a 2-byte UTF-8 sequence for U+0080-U+00FF.
  * Each message (:20: ... -) is read; :60F:/:60M: start and :62F:/:62M: end a "day";
    :64: and :65: are not read (a warning is logged); :20: STARTDISP reports are skipped.

camt.053 (importer xml): 6.5.3 has profiles for camt.052.001.02 and camt.053.001.04 only
  (no camt.054, nothing newer). With --profile=camt_053_001_04 given, a camt.053.001.08
  file is read too, as the namespace is not checked then (the auto-detecting "default"
  profile refuses it). Per <Ntry>: BookgDt/Dt is the date, ValDt/Dt the value date,
  Amt with CdtDbtInd the signed amount, AcctSvcrRef the transaction id. The purpose is
  read from <RmtInf><Ustrd> and the parties from <RltdPties> DIRECTLY under <Ntry>,
  where no bank puts them (they sit in <NtryDtls><TxDtls>), so in practice the purpose
  is <AddtlNtryInf> alone (e.g. "SEPA-GUTSCHRIFT") and the payer is not read at all.
  <Ustrd> lines, where read, then AddtlNtryInf are the purpose lines, in that order.
  <Strd> (creditor reference) is never read.
"""

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from decimal import Decimal
from fractions import Fraction

IMPORTERS = {
    "mt940": ("swift", "SWIFT-MT940"),
    "camt.053": ("xml", "camt_053_001_04"),
}
RS, US = "\x1e", "\x1f"
TEMPLATE = f"{RS}$(date){US}$(valutaDate){US}$(value){US}$(purpose){US}"
TIMEOUT = 120


class Failure(Exception):
    pass


def run(args, cwd):
    try:
        done = subprocess.run(
            args,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=TIMEOUT,
            env={**os.environ, "LC_ALL": "C", "HOME": cwd},
        )
    except subprocess.TimeoutExpired as e:
        raise Failure(f"{' '.join(args[:5])} ... took over {TIMEOUT} s") from e
    if done.returncode != 0:
        # aqbanking-cli logs to stderr, lines "LEVEL:TIME:MODULE(PID):FILE: LINE: TEXT";
        # its "No AqBanking config folder found" lines are normal for a fresh folder, and
        # the hex dumps of the offending data that follow some errors are left out.
        log = [
            line for line in done.stderr.decode("utf-8", "replace").splitlines()
            if line[:2].rstrip(":").isdigit() and "banking_update.c" not in line
        ]
        raise Failure(f"{' '.join(args[:6])} ... exited {done.returncode}:\n" + "\n".join(log[:20]))
    return done.stdout.decode("utf-8", "replace")


def iso_date(text):
    text = text.strip()
    if len(text) != 8 or not text.isdigit():
        raise Failure(f"AqBanking gave the date {text!r}, not YYYYMMDD")
    return f"{text[:4]}-{text[4:6]}-{text[6:]}"


def decimal_amount(text):
    """'-2850/100:EUR' (AqBanking's rational value with currency) -> '-28.50'."""
    number = text.strip().split(":", 1)[0]
    try:
        value = Fraction(number)
    except (ValueError, ZeroDivisionError) as e:
        raise Failure(f"AqBanking gave the amount {text!r}") from e
    for places in range(2, 19):
        scaled = value * 10**places
        if scaled.denominator == 1:
            return str(Decimal(scaled.numerator).scaleb(-places))
    raise Failure(f"the amount {text!r} is no finite decimal")


def purpose(text):
    return " ".join(line.strip() for line in text.split("\n") if line.strip())


def transactions(listing):
    out = []
    for record in listing.split(RS)[1:]:
        fields = record.split(US)
        if len(fields) < 5:
            raise Failure(f"unexpected listtrans output: {record!r}")
        date, value_date, value, text = fields[:4]
        day = date if date.strip() else value_date
        if not day.strip():
            raise Failure(f"a transaction without any date: {record!r}")
        if not value.strip():
            raise Failure(f"a transaction without an amount: {record!r}")
        out.append([iso_date(day), decimal_amount(value), purpose(text)])
    return out


def camt_message(path):
    """The local name of the message element of an ISO 20022 document (BkToCstmrStmt, ...)."""
    depth = 0
    try:
        for event, element in ET.iterparse(path, events=("start", "end")):
            depth += 1 if event == "start" else -1
            if event == "start" and depth == 2:
                return element.tag.rsplit("}", 1)[-1]
    except ET.ParseError as e:
        raise Failure(f"{path} is not well-formed XML: {e}") from e
    return None


def read(format_name, path):
    importer, profile = IMPORTERS[format_name]
    cli = shutil.which("aqbanking-cli")
    if cli is None:
        raise Failure("aqbanking-cli not found: apt-get install aqbanking-tools")
    if not os.path.isfile(path):
        raise Failure(f"no such file: {path}")
    path = os.path.abspath(path)
    if format_name == "camt.053":
        # Given a profile, the xml importer takes any file and reads nothing from one
        # that is no camt.053 (a camt.054, or no XML at all), successfully: said here.
        message = camt_message(path)
        if message != "BkToCstmrStmt":
            raise Failure(f"{path} is no camt.053 statement (its message is <{message}>); "
                          "AqBanking 6.5.3 has no camt.054 importer")
    home = pwd.getpwuid(os.getuid()).pw_dir
    legacy = os.path.join(home, ".aqbanking")
    legacy_existed = os.path.lexists(legacy)
    try:
        with tempfile.TemporaryDirectory(prefix="aqbanking-") as tmp:
            cfg, ctx = os.path.join(tmp, "cfg"), os.path.join(tmp, "ctx")
            run([cli, "-n", "-D", cfg, "import", f"--importer={importer}", f"--profile={profile}",
                 "-c", ctx, "-f", path], tmp)
            if not os.path.isfile(ctx):
                raise Failure("aqbanking-cli import wrote no context file")
            found = transactions(run([cli, "-n", "-D", cfg, "listtrans", "-c", ctx, "-T", TEMPLATE], tmp))
            if not found:
                # Not an error (a statement may be empty), but said, so that an empty
                # answer is not taken for agreement.
                print("aqbanking.py: aqbanking-cli read no transaction", file=sys.stderr)
            return found
    finally:
        if not legacy_existed:
            for folder in ("settings", "settings6", ""):
                try:
                    os.rmdir(os.path.join(legacy, folder))
                except OSError:
                    pass


def main(argv):
    if len(argv) != 3 or argv[1] not in IMPORTERS:
        print(f"usage: {argv[0]} {{{'|'.join(IMPORTERS)}}} FILE", file=sys.stderr)
        return 2
    try:
        found = read(argv[1], argv[2])
    except Failure as e:
        print(f"aqbanking.py: {e}", file=sys.stderr)
        return 1
    json.dump(found, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
