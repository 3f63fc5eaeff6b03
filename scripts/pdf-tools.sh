#!/usr/bin/env bash
# What the renderer's tests read PDFs with and compare them to: poppler-utils, qpdf,
# Chromium, and the Noto fonts that print the scripts DejaVu lacks (Devanagari and Thai
# from fonts-noto-core; Chinese, Japanese and Korean from fonts-noto-cjk). Installs what is
# missing with apt-get when it can (as root), and fails naming what is still missing.
set -euo pipefail

missing=()
command -v pdftotext >/dev/null 2>&1 || missing+=(poppler-utils)
command -v qpdf >/dev/null 2>&1 || missing+=(qpdf)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
fonts=$(fc-list 2>/dev/null || true)
has_font() { grep -q "$1" <<<"$fonts"; }
has_font "NotoSansThai-Regular" || missing+=(fonts-noto-core)
has_font "NotoSansCJK-Regular" || missing+=(fonts-noto-cjk)
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" fontconfig >/dev/null
    fc-cache -f >/dev/null
else
    echo "the PDF tests need: ${missing[*]} (apt-get install ${missing[*]})" >&2
    exit 1
fi
