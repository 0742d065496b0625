"""Encodings through the whole pipeline (bytes in, text out): real text encoded in legacy charsets,
declared one way and written another, UTF-16 with a BOM, broken UTF-8. The decoding rules themselves are
unit-tested in test_decode.py; here every case must give the page's text, or at worst U+FFFD, never an
error or an exception."""

from __future__ import annotations

import codecs

import pytest

from extract_trt import Extractor

from hostile_pages import AllMain

RUSSIAN = "Москва — столица России, крупнейший по численности населения город страны и важный культурный центр."
CHINESE = "北京是中华人民共和国的首都，是全国的政治中心、文化中心。北京历史悠久，有三千多年的建城史。"
JAPANESE = "東京は日本の首都であり、世界有数の大都市です。多くの人々がこの街で働き、生活しています。"
FRENCH = "Le cœur a ses raisons que la raison ne connaît point. Déjà vu, café crème, à bientôt."
GERMAN = "Die Straße führt über die Brücke zum Schloss; Grüße aus München."

EXTRACTOR = Extractor(labeler=AllMain(), output="text")


def page(text: str, meta: str | None = None) -> str:
    head = f'<meta charset="{meta}">' if meta else ""
    return f"<html><head>{head}<title>t</title></head><body><article><p>{text}</p></article></body></html>"


def text_of(data: bytes, content_type: str | None = None) -> str:
    r = EXTRACTOR.extract_many([{"id": "x", "html": data, "content_type": content_type}])
    result = next(iter(r))
    assert result.error is None, result.error
    return result.text


@pytest.mark.parametrize(
    "text, codec, label",
    [
        (CHINESE, "gb2312", "gb2312"),
        (CHINESE, "gb18030", "gbk"),
        (JAPANESE, "shift_jis", "shift_jis"),
        (JAPANESE, "euc_jp", "euc-jp"),
        (RUSSIAN, "cp1251", "windows-1251"),
        (RUSSIAN.replace("—", "-"), "koi8_r", "koi8-r"),
        (FRENCH, "cp1252", "iso-8859-1"),
        (GERMAN, "iso8859_15", "iso-8859-15"),
    ],
    ids=lambda v: v if v.isascii() else "",
)
def test_declared_legacy_charsets(text: str, codec: str, label: str) -> None:
    assert text_of(page(text, label).encode(codec)) == text
    assert text_of(page(text).encode(codec), f"text/html; charset={label}") == text


@pytest.mark.parametrize(
    "text, codec",
    [(CHINESE, "gb2312"), (JAPANESE, "shift_jis"), (RUSSIAN, "cp1251"), (CHINESE + JAPANESE, "utf-8")],
    ids=lambda v: v if v.isascii() else "",
)
def test_undeclared_pages_are_detected(text: str, codec: str) -> None:
    assert text_of(page(text * 2).encode(codec)) == text * 2


@pytest.mark.parametrize(
    "text, label",
    [(RUSSIAN, "windows-1251"), (CHINESE, "gb2312"), (FRENCH, "iso-8859-1"), (JAPANESE, "shift_jis")],
    ids=lambda v: v if v.isascii() else "",
)
def test_declared_legacy_but_written_in_utf8(text: str, label: str) -> None:
    data = page(text, label).encode("utf-8")
    assert text_of(data) == text
    assert text_of(data, f"text/html; charset={label}") == text


@pytest.mark.parametrize(
    "text, codec", [(RUSSIAN, "cp1251"), (CHINESE, "gb18030"), (JAPANESE, "cp932")], ids=lambda v: v if v.isascii() else ""
)
def test_declared_utf8_but_written_in_a_legacy_charset(text: str, codec: str) -> None:
    data = page(text * 2, "utf-8").encode(codec)
    assert text_of(data, "text/html; charset=utf-8") == text * 2


def test_header_and_meta_disagree_and_the_bytes_decide() -> None:
    data = page(RUSSIAN, "gb2312").encode("cp1251")  # meta is wrong; header is right
    assert text_of(data, "text/html; charset=windows-1251") == RUSSIAN


@pytest.mark.parametrize("bom, codec", [(codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"), (codecs.BOM_UTF8, "utf-8")])
def test_byte_order_marks(bom: bytes, codec: str) -> None:
    text = RUSSIAN + " " + CHINESE
    assert text_of(bom + page(text, "windows-1252").encode(codec)) == text


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[:40] + b"\xff\xfe\xfd" + b[40:],  # bytes that never occur in UTF-8
        lambda b: b[:-20] + b"\xe4\xb8",  # truncated multi-byte sequence at the end
        lambda b: b.replace("столица".encode(), b"\xc0\xaf\xe0\x80\xaf"),  # overlong encodings
        lambda b: b.replace("крупнейший".encode(), b"\xed\xa0\x80"),  # an encoded surrogate
        lambda b: b.replace(b"</p>", "<p>Ещё</p>".encode("cp1251") + b"</p>"),  # a second charset mixed in
    ],
    ids=["non-utf8-bytes", "truncated", "overlong", "surrogate", "mixed-charsets"],
)
def test_broken_utf8_keeps_the_readable_text(damage) -> None:
    text = text_of(damage(page(RUSSIAN + " " + CHINESE).encode("utf-8")))
    assert "Москва" in text and "北京" in text


def test_invalid_bytes_under_a_utf8_declaration_become_replacement_characters() -> None:
    data = page("caf\xe9 " + CHINESE, "utf-8").encode("utf-8").replace(b"caf\xc3\xa9", b"caf\xe9")
    text = text_of(data, "text/html; charset=utf-8")
    assert text.startswith("caf") and CHINESE in text


@pytest.mark.parametrize("text", [FRENCH, GERMAN, RUSSIAN, CHINESE + JAPANESE], ids=["fr", "de", "ru", "zh-ja"])
def test_utf8_that_was_decoded_as_latin1_upstream_comes_back(text: str) -> None:
    """Mojibake: a string (or the UTF-8 bytes of one) that is UTF-8 read as windows-1252 / Latin-1 somewhere
    before us; its metadata too."""
    html = page(text, "utf-8").replace("<title>t</title>", f"<title>{text[:12]}</title>")
    for garbled in (html.encode().decode("cp1252", "extract_trt.cp1252"), html.encode().decode("latin-1")):
        result = Extractor(labeler=AllMain(), output="text", metadata=True).extract(garbled)
        assert result.error is None and result.text == text
        assert result.metadata.title == text[:12]
        assert text_of(garbled.encode()) == text  # a page served so (its CMS stored the misreading)


def test_text_that_only_partly_reads_as_misread_utf8_is_kept() -> None:
    html = page(FRENCH + " Ã©")  # "Ã©" alone would be a misread "é", but "œ" and the rest are not UTF-8 read so
    assert text_of(html.encode()) == FRENCH + " Ã©"
    assert Extractor(labeler=AllMain(), output="text").extract(html).text == FRENCH + " Ã©"


def test_a_str_that_starts_with_a_bom_has_no_bom_in_its_output() -> None:
    """Read with encoding="utf-8" (not "utf-8-sig"), a saved page keeps its BOM as the first character; bytes
    lose it when decoded, and so does a str."""
    html = page(FRENCH)
    for given in ("\ufeff" + html, "\ufeff\ufeff" + html, html.encode("utf-8-sig")):
        result = Extractor(labeler=AllMain(), output=("text", "markdown")).extract(given)
        assert result.text == FRENCH and result.markdown == FRENCH
