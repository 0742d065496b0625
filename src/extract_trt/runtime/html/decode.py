"""Bytes → ``str`` for HTML pages, by a fixed and documented order of charset rules.

Rules, first match wins:

1. **Byte-order mark.** A UTF-8, UTF-16 LE/BE or UTF-32 LE/BE BOM decides the encoding (as in browsers).
2. **HTTP header.** ``charset=`` in the ``Content-Type`` header value, when one is given.
3. **In-document declaration**, found by a bytes regex over the first 4096 bytes:
   ``<meta charset=…>``, ``<meta http-equiv="Content-Type" content="…; charset=…">`` (any ``<meta …charset=…>``),
   else an XML declaration ``<?xml … encoding="…"?>``. As in the WHATWG spec, a ``utf-16``/``utf-32``
   label found *inside* the document means UTF-8 (an ASCII-readable declaration cannot be UTF-16).

   A page declared UTF-8 (header or document) whose bytes are not all valid UTF-8 is decoded as UTF-8
   with U+FFFD for each bad byte when the bad bytes are a few strays (at most 8, or at most 1 per 10
   valid non-ASCII characters): a few invalid bytes are no reason to read the page in another charset.

   Exception, **mislabelled UTF-8**: when the declaration (header or document) names another charset but
   the bytes hold non-ASCII and are valid UTF-8, they are UTF-8. Browsers would show mojibake; for a
   corpus the UTF-8 reading is right: legacy-encoded text (Cyrillic, CJK, accented Latin) is valid UTF-8
   by chance only in a few bytes, while an ``ISO-8859-1`` server default in front of a UTF-8 CMS is
   common.
4. **Valid UTF-8.** If the bytes decode as strict UTF-8, they are UTF-8 (pure ASCII included) —
   unless they look like UTF-16 without a BOM (:func:`utf16_without_bom`), which is then tried first.
5. **Detector.** charset-normalizer's best guess (``from_bytes(data).best()``).
6. **Last resort.** UTF-8 with ``errors="replace"`` (U+FFFD for each bad byte); the only lossy rule.

Labels are resolved like the WHATWG Encoding standard for the cases that matter on the web
(``iso-8859-1``/``latin1``/``us-ascii`` → windows-1252, ``gb2312``/``gbk`` → gb18030, ``shift_jis`` →
cp932, ``euc-kr`` → cp949, ``big5`` → big5hkscs, …), then via :func:`codecs.lookup`. Unknown labels,
non-text codecs (``base64``, ``rot13``) and UTF-7 are ignored. A declared charset that does not decode
the bytes strictly falls through to the next rule. windows-1252 decodes its five unassigned bytes to the
matching C1 controls, as browsers do, instead of failing.

Leading U+FEFF characters (BOMs) are removed from the result. Only non-bytes input raises :class:`DecodeError`.
The common case (valid UTF-8, with or without a declaration) costs one regex search and one decode.

**Mojibake** (:func:`repair_mojibake`, run by the extractor on every page, ``str`` or decoded bytes): a page
whose every character is one that windows-1252 or Latin-1 decodes a byte to, and whose bytes read that way
are valid UTF-8 with at least one multi-byte character, is UTF-8 that was decoded in one of those charsets
somewhere upstream ("Itâ€™s", "cafÃ©"; a crawler that trusted an ``ISO-8859-1`` header, or a CMS that stored
it so): its UTF-8 reading is the page. The same reasoning as the mislabelled-UTF-8 rule above, for text that
arrives already decoded. Repeated while it applies (text decoded wrongly twice), at most
:data:`MAX_MOJIBAKE_ROUNDS` times. All or nothing: a page that mixes such sequences with characters the two
charsets cannot produce (real curly quotes, CJK) is left as it is, since some of its text was decoded right.
Pages written in Latin-1 or windows-1252 are not touched: their accented letters stand beside ASCII, which is
not valid UTF-8.
"""

from __future__ import annotations

import codecs
import re

from extract_trt.errors import DecodeError

__all__ = ["decode_html", "repair_mojibake", "resolve_charset", "utf16_without_bom"]

_SNIFF_BYTES = 4096

# UTF-32 LE must be tested before UTF-16 LE: its BOM starts with the UTF-16 LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

_HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([^\s"';,]+)""", re.IGNORECASE)
_META_CHARSET = re.compile(rb"""<meta\b[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:+-]+)""", re.IGNORECASE)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml\b[^>]*?encoding\s*=\s*["']\s*([A-Za-z0-9_.:+-]+)""", re.IGNORECASE)

# WHATWG label → Python codec, where Python's own name lookup is missing or means something narrower
# (browsers decode "iso-8859-1" pages as windows-1252, "gb2312" as gb18030, and so on).
_ALIASES: dict[str, str] = {
    **dict.fromkeys(
        (
            "ascii", "us-ascii", "ansi_x3.4-1968", "iso-ir-100", "iso8859-1", "iso88591", "iso_8859-1",
            "iso_8859-1:1987", "iso-8859-1", "l1", "latin1", "latin-1", "cp819", "ibm819", "csisolatin1",
            "x-cp1252", "cp1252", "windows-1252",
        ),
        "cp1252",
    ),
    **dict.fromkeys(
        ("gb2312", "gb_2312", "gb_2312-80", "csgb2312", "chinese", "iso-ir-58", "gbk", "x-gbk", "cp936",
         "windows-936", "gb18030"),
        "gb18030",
    ),
    **dict.fromkeys(
        ("shift_jis", "shift-jis", "sjis", "x-sjis", "ms_kanji", "ms932", "csshiftjis", "windows-31j", "cp932"),
        "cp932",
    ),
    **dict.fromkeys(
        ("euc-kr", "euckr", "ks_c_5601-1987", "ks_c_5601-1989", "ksc5601", "ksc_5601", "iso-ir-149",
         "csksc56011987", "korean", "windows-949", "cp949"),
        "cp949",
    ),
    **dict.fromkeys(("big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5"), "big5hkscs"),
    **dict.fromkeys(("x-euc-jp", "euc-jp", "cseucpkdfmtjapanese"), "euc_jp"),
    **dict.fromkeys(("iso-8859-9", "iso8859-9", "latin5", "l5", "iso-ir-148", "csisolatin5", "windows-1254"), "cp1254"),
    **dict.fromkeys(("tis-620", "iso-8859-11", "dos-874", "windows-874"), "cp874"),
    **dict.fromkeys(("iso-8859-8-i", "iso-8859-8-e", "csiso88598i", "logical", "visual"), "iso8859-8"),
    **dict.fromkeys(("x-mac-cyrillic", "x-mac-ukrainian"), "mac-cyrillic"),
    **dict.fromkeys(("x-mac-roman", "macintosh", "mac", "csmacintosh"), "mac-roman"),
    **{f"x-cp125{i}": f"cp125{i}" for i in range(9)},
    "unicode-1-1-utf-8": "utf-8",
    "unicode11utf8": "utf-8",
    "unicode20utf8": "utf-8",
    "x-unicode20utf8": "utf-8",
}  # fmt: skip

# Labels that are never honoured: UTF-7 is an XSS vector and browsers dropped it; "replacement" labels
# (iso-2022-kr, hz-gb-2312, …) mean "refuse to decode" in WHATWG.
_REJECTED = frozenset({"utf-7", "utf7", "csunicode11utf7", "unicode-1-1-utf-7", "x-user-defined", "replacement",
                       "iso-2022-kr", "iso-2022-cn", "iso-2022-cn-ext", "hz-gb-2312", "csiso2022kr"})  # fmt: skip
_WIDE_UNICODE = frozenset({"utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"})

_CP1252_UNASSIGNED = frozenset(b"\x81\x8d\x8f\x90\x9d")


def _cp1252_c1(exc: UnicodeError) -> tuple[str, int]:
    # Browsers map windows-1252's five holes to C1 controls; Python's codec rejects them. Only registered
    # for cp1252 decoding (its errors report the encoding as "charmap").
    if isinstance(exc, UnicodeDecodeError):
        bad = exc.object[exc.start : exc.end]
        if bad and all(b in _CP1252_UNASSIGNED for b in bad):
            return "".join(map(chr, bad)), exc.end
    raise exc


codecs.register_error("extract_trt.cp1252", _cp1252_c1)


def _latin1_bytes(exc: UnicodeError) -> tuple[bytes, int]:
    # Encoding back to the bytes a windows-1252 or Latin-1 decoder read: characters windows-1252 has no byte
    # for (U+0080-U+009F: its five holes in a browser, any of them in Latin-1) are their Latin-1 byte.
    if isinstance(exc, UnicodeEncodeError):
        chars = exc.object[exc.start : exc.end]
        if all(ord(c) < 0x100 for c in chars):
            return chars.encode("latin-1"), exc.end
    raise exc


codecs.register_error("extract_trt.latin1", _latin1_bytes)

MAX_MOJIBAKE_ROUNDS = 3
# What a UTF-8 continuation byte (0x80-0xBF) decodes to in windows-1252, or in Latin-1 where windows-1252 has none.
_CONTINUATION = frozenset(
    bytes(range(0x80, 0xC0)).decode("cp1252", "extract_trt.cp1252") + "".join(map(chr, range(0x80, 0xA0)))
)


def _utf8_as_decoded(text: str) -> str | None:
    """The UTF-8 reading of ``text``'s windows-1252 / Latin-1 bytes, or None."""
    if text.isascii():
        return None
    try:  # the page's first non-ASCII character tells most pages apart without encoding them
        text.encode("ascii")
    except UnicodeEncodeError as exc:
        first = exc.start
    else:
        return None
    if not ("\xc2" <= text[first] <= "\xf4" and first + 1 < len(text) and text[first + 1] in _CONTINUATION):
        return None  # not a UTF-8 lead byte followed by a continuation byte
    try:
        try:
            data = text.encode("latin-1")  # the fast codec first
        except UnicodeEncodeError:
            data = text.encode("cp1252", "extract_trt.latin1")
        return data.decode("utf-8").lstrip("\ufeff")
    except UnicodeError:  # a character neither charset decodes to, or bytes that are not UTF-8
        return None


def repair_mojibake(text: str) -> str:
    """``text`` read as the UTF-8 it was when it is UTF-8 decoded as windows-1252 or Latin-1 (module notes,
    "Mojibake"); otherwise ``text`` itself."""
    for _ in range(MAX_MOJIBAKE_ROUNDS):
        repaired = _utf8_as_decoded(text)
        if repaired is None:
            break
        text = repaired
    return text


def resolve_charset(label: str | bytes | None) -> str | None:
    """A Python codec name for a charset label, or ``None`` if it is unknown or not honoured."""
    if label is None:
        return None
    if isinstance(label, bytes):
        label = label.decode("ascii", "ignore")
    key = label.strip().strip("\"'").lower()
    if not key or key in _REJECTED:
        return None
    name = _ALIASES.get(key, key)
    try:
        info = codecs.lookup(name)
    except LookupError:
        return None
    if not getattr(info, "_is_text_encoding", True) or info.name in ("utf-7",):
        return None
    return info.name


def _try_decode(data: bytes, codec: str | None) -> str | None:
    if codec is None:
        return None
    errors = "extract_trt.cp1252" if codec == "cp1252" else "strict"
    try:
        return data.decode(codec, errors)
    except (UnicodeDecodeError, LookupError):
        return None


def _header_charset(content_type: str | None) -> str | None:
    if not content_type:
        return None
    m = _HEADER_CHARSET.search(content_type)
    return resolve_charset(m.group(1)) if m else None


def _document_charset(head: bytes) -> str | None:
    m = _META_CHARSET.search(head) or _XML_ENCODING.search(head)
    if not m:
        return None
    codec = resolve_charset(m.group(1))
    if codec in _WIDE_UNICODE:
        return "utf-8"
    return codec


def _detect(data: bytes) -> str | None:
    try:
        from charset_normalizer import from_bytes
    except ImportError:  # optional at run time: without it the documented last resort applies
        return None
    try:
        best = from_bytes(data).best()
        return None if best is None else str(best)
    except Exception:  # a detector bug must not lose the page; rule 6 still yields text
        return None


_UTF16_SNIFF_PAIRS = 256
_STRAY_BYTES = 8  # invalid bytes a declared-UTF-8 page may hold and still be read as UTF-8 …
_STRAY_SHARE = 10  # … or at most 1 per this many valid non-ASCII characters


def _mostly_utf8(data: bytes) -> str | None:
    """``data`` as UTF-8 with U+FFFD for bad bytes when they are a few strays (at most 8, or 1 per 10 valid
    non-ASCII characters), else ``None``: a page in another charset is all "bad bytes" in UTF-8."""
    text = data.decode("utf-8", "replace")
    bad = text.count("\ufffd") - data.count("\ufffd".encode())
    non_ascii = len(text) - len(text.encode("ascii", "ignore")) - bad
    return text if bad <= _STRAY_BYTES or bad * _STRAY_SHARE <= non_ascii else None


def utf16_without_bom(data: bytes) -> str | None:
    """``"utf-16-le"``/``"utf-16-be"`` when ``data`` looks like UTF-16 markup without a BOM, else ``None``.

    HTML markup is ASCII, so in UTF-16 at least half of the first code units (256 looked at) have a NUL
    high byte, and no low byte is NUL; text in any 8-bit charset or UTF-8 has (almost) no NUL at all.
    """
    head = data[: 2 * _UTF16_SNIFF_PAIRS]
    pairs = len(head) // 2
    if pairs < 2 or len(data) % 2:
        return None
    even_nul = head[0 : 2 * pairs : 2].count(0)
    odd_nul = head[1 : 2 * pairs : 2].count(0)
    if odd_nul * 2 >= pairs and even_nul == 0:
        return "utf-16-le"
    if even_nul * 2 >= pairs and odd_nul == 0:
        return "utf-16-be"
    return None


def decode_html(data: bytes, content_type: str | None = None) -> str:
    """Decode the bytes of an HTML page by the module's rules (BOM, header, meta, UTF-8, detector, replace)."""
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise DecodeError(f"decode_html needs bytes, got {type(data).__name__}")
    if not data:
        return ""

    text: str | None = None
    for bom, codec in _BOMS:
        if data.startswith(bom):
            text = _try_decode(data[len(bom) :], codec)
            break
    if text is None:
        header = _header_charset(content_type)
        document = _document_charset(data[:_SNIFF_BYTES])
        declared = header or document
        if declared is not None and declared != "utf-8" and not data.isascii():
            text = _try_decode(data, "utf-8")  # mislabelled UTF-8 (rules 2-3, exception)
        if text is None:
            text = _try_decode(data, header)
        if text is None:
            text = _try_decode(data, document)
        if text is None and "utf-8" in (header, document):
            text = _mostly_utf8(data)
    if text is None:
        text = _try_decode(data, utf16_without_bom(data) or "utf-8")
    if text is None:
        text = _detect(data)
    if text is None:
        text = data.decode("utf-8", "replace")
    return text.lstrip("\ufeff")
