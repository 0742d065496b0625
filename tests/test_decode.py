"""decode_html: BOM → header → meta → UTF-8 → detector → UTF-8 with replacement."""

from __future__ import annotations

import codecs

import pytest

from extract_trt.errors import DecodeError
from extract_trt.runtime.html.decode import decode_html, repair_mojibake, resolve_charset

RUSSIAN = (
    "Москва — столица России, крупнейший по численности населения город страны. "
    "Город расположен на реке Москве в центре Восточно-Европейской равнины. "
    "Это важный транспортный узел, а также политический и культурный центр."
)
CHINESE = (
    "北京是中华人民共和国的首都，是全国的政治中心、文化中心。"
    "北京历史悠久，有三千多年的建城史。这里有很多名胜古迹，例如故宫和长城。"
)
JAPANESE = (
    "東京は日本の首都であり、世界有数の大都市です。多くの人々がこの街で働き、生活しています。"
    "美しい公園や歴史的な寺院もあります。"
)
FRENCH = "Le cœur a ses raisons que la raison ne connaît point. Déjà vu, café crème, à bientôt — « merci » !"


def page(body: str, head: str = "") -> str:
    return f"<!DOCTYPE html><html><head>{head}<title>t</title></head><body><p>{body}</p></body></html>"


def cyrillic_share(text: str) -> float:
    letters = [c for c in text if c.isalpha()]
    return sum("\u0400" <= c <= "\u04ff" for c in letters) / max(1, len(letters))


# --- rule 1: byte-order marks -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bom, codec",
    [
        (codecs.BOM_UTF8, "utf-8"),
        (codecs.BOM_UTF16_LE, "utf-16-le"),
        (codecs.BOM_UTF16_BE, "utf-16-be"),
        (codecs.BOM_UTF32_LE, "utf-32-le"),
        (codecs.BOM_UTF32_BE, "utf-32-be"),
    ],
)
def test_bom_decides_and_is_stripped(bom: bytes, codec: str) -> None:
    html = page(RUSSIAN + " " + FRENCH)
    out = decode_html(bom + html.encode(codec))
    assert out == html


def test_bom_beats_header_and_meta() -> None:
    html = page(FRENCH, '<meta charset="windows-1252">')
    data = codecs.BOM_UTF8 + html.encode("utf-8")
    assert decode_html(data, "text/html; charset=iso-8859-1") == html


# --- rule 2: HTTP header --------------------------------------------------------------------------------


def test_header_charset() -> None:
    html = page(RUSSIAN)
    assert decode_html(html.encode("cp1251"), "text/html; charset=windows-1251") == html


def test_header_charset_quoted_and_cased() -> None:
    html = page(RUSSIAN)
    assert decode_html(html.encode("koi8-r", "replace"), 'text/html; Charset="KOI8-R"') == html.encode(
        "koi8-r", "replace"
    ).decode("koi8-r")


def test_header_beats_meta() -> None:
    html = page(RUSSIAN, '<meta charset="utf-8">')
    assert decode_html(html.encode("cp1251"), "text/html;charset=cp1251") == html


def test_header_without_charset_is_ignored() -> None:
    html = page(CHINESE)
    assert decode_html(html.encode("utf-8"), "text/html") == html


# --- rule 3: in-document declarations ---------------------------------------------------------------------


def test_meta_charset() -> None:
    html = page(RUSSIAN, '<meta charset="windows-1251">')
    assert decode_html(html.encode("cp1251")) == html


def test_meta_http_equiv() -> None:
    html = page(RUSSIAN, '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251">')
    assert decode_html(html.encode("cp1251")) == html


def test_meta_unquoted_upper_case() -> None:
    html = page(JAPANESE, "<META CHARSET=Shift_JIS>")
    assert decode_html(html.encode("shift_jis")) == html


def test_meta_beyond_4096_bytes_is_not_seen() -> None:
    # Outside the sniffing window the declaration is ignored and the detector decides.
    html = "<!--" + "x" * 5000 + '--><meta charset="windows-1251">' + page(RUSSIAN * 3)
    out = decode_html(html.encode("cp1251"))
    assert isinstance(out, str) and cyrillic_share(out[5000:]) > 0.5


def test_meta_latin1_means_windows_1252() -> None:
    # “smart quotes” are 0x93/0x94 in windows-1252, C1 controls in real ISO-8859-1: browsers use 1252.
    html = page("\u201cquoted\u201d \u20ac 5 " + FRENCH, '<meta charset="iso-8859-1">')
    assert decode_html(html.encode("cp1252")) == html


def test_meta_utf16_label_means_utf8() -> None:
    html = page(CHINESE, '<meta charset="utf-16">')
    assert decode_html(html.encode("utf-8")) == html


def test_xml_declaration() -> None:
    html = '<?xml version="1.0" encoding="windows-1251"?>' + page(RUSSIAN)
    assert decode_html(html.encode("cp1251")) == html


# --- declared charsets for East Asian pages ---------------------------------------------------------------


@pytest.mark.parametrize("label", ["gb2312", "GBK", "gb18030", "x-gbk"])
def test_gb_labels_decode_as_gb18030(label: str) -> None:
    html = page(CHINESE, f'<meta charset="{label}">')
    assert decode_html(html.encode("gb2312")) == html


def test_gb18030_only_characters() -> None:
    text = CHINESE + " 㐀䶵 €"  # outside GB2312
    html = page(text, '<meta http-equiv="content-type" content="text/html;charset=gb2312">')
    assert decode_html(html.encode("gb18030")) == html


@pytest.mark.parametrize("label", ["shift_jis", "x-sjis", "Shift-JIS", "windows-31j"])
def test_shift_jis_labels(label: str) -> None:
    html = page(JAPANESE + "①", f'<meta charset="{label}">')  # ① exists only in the cp932 superset
    assert decode_html(html.encode("cp932")) == html


def test_euc_kr_label() -> None:
    html = page("서울은 대한민국의 수도이다. 한강이 도시를 가로지른다.", '<meta charset="euc-kr">')
    assert decode_html(html.encode("euc-kr")) == html


# --- rules 4–6: undeclared bytes --------------------------------------------------------------------------


def test_valid_utf8_without_declaration() -> None:
    html = page(RUSSIAN + CHINESE + JAPANESE + FRENCH)
    assert decode_html(html.encode("utf-8")) == html


def test_utf8_fast_path_skips_detector(monkeypatch: pytest.MonkeyPatch) -> None:
    import charset_normalizer

    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError("detector called on valid UTF-8")

    monkeypatch.setattr(charset_normalizer, "from_bytes", boom)
    html = page(CHINESE)
    assert decode_html(html.encode("utf-8")) == html
    assert decode_html(b"<p>plain ascii</p>") == "<p>plain ascii</p>"


@pytest.mark.parametrize(
    "text, codec",
    [(RUSSIAN, "cp1251"), (CHINESE, "gb2312"), (CHINESE, "gb18030"), (JAPANESE, "shift_jis")],
)
def test_undeclared_legacy_pages_use_detector(text: str, codec: str) -> None:
    html = page(text)
    out = decode_html(html.encode(codec))
    assert out == html


def test_declared_utf8_but_windows_1251() -> None:
    html = page(RUSSIAN, '<meta charset="utf-8">')
    out = decode_html(html.encode("cp1251"), "text/html; charset=utf-8")
    assert isinstance(out, str)
    assert "<p>" in out and cyrillic_share(out) > 0.5


def test_wrong_declaration_falls_through_to_utf8() -> None:
    # Bytes are UTF-8; the shift_jis declaration does not decode them strictly, so rule 4 applies.
    html = page(RUSSIAN + " ✓", '<meta charset="shift_jis">')
    assert decode_html(html.encode("utf-8")) == html


def test_unknown_and_rejected_labels_are_ignored() -> None:
    html = page(FRENCH, '<meta charset="no-such-charset">')
    assert decode_html(html.encode("utf-8")) == html
    assert decode_html(html.encode("utf-8"), "text/html; charset=utf-7") == html
    assert decode_html(html.encode("utf-8"), "text/html; charset=base64") == html


def test_invalid_utf8_junk_never_raises() -> None:
    junk = bytes(range(256)) * 4 + b"\xff\xfe\xfd\xc3\x28\xa0\xa1\xe2\x28\xa1"
    out = decode_html(junk)
    assert isinstance(out, str) and out


def test_last_resort_is_utf8_replace(monkeypatch: pytest.MonkeyPatch) -> None:
    import charset_normalizer

    class NoMatch:
        def best(self) -> None:
            return None

    monkeypatch.setattr(charset_normalizer, "from_bytes", lambda data: NoMatch())
    assert decode_html(b"caf\xc3\xa9 \xff ok") == "café \ufffd ok"


def test_windows_1252_unassigned_bytes_map_to_c1() -> None:
    data = b'<meta charset="windows-1252"><p>a\x81b\x93c\x94</p>'
    assert decode_html(data) == '<meta charset="windows-1252"><p>a\x81b\u201cc\u201d</p>'


def test_empty_bytes() -> None:
    assert decode_html(b"") == ""
    assert decode_html(b"", "text/html; charset=utf-16") == ""


def test_bom_only() -> None:
    assert decode_html(codecs.BOM_UTF8) == ""


def test_bytearray_and_memoryview() -> None:
    html = page(FRENCH).encode("utf-8")
    assert decode_html(bytearray(html)) == decode_html(memoryview(html)) == html.decode("utf-8")


@pytest.mark.parametrize("bad", ["<p>already text</p>", None, 123, ["x"]])
def test_non_bytes_raises_decode_error(bad: object) -> None:
    with pytest.raises(DecodeError, match="needs bytes"):
        decode_html(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "label, codec",
    [
        ("latin1", "cp1252"),
        ("ISO-8859-1", "cp1252"),
        ("us-ascii", "cp1252"),
        ("gb2312", "gb18030"),
        ("GBK", "gb18030"),
        ("shift_jis", "cp932"),
        ("x-sjis", "cp932"),
        ("euc-kr", "cp949"),
        ("utf8", "utf-8"),
        ("UTF-8", "utf-8"),
        ("windows-1251", "cp1251"),
        ("koi8-r", "koi8-r"),
        (" 'big5' ", "big5hkscs"),
        ("utf-7", None),
        ("rot13", None),
        ("bogus", None),
        ("", None),
        (None, None),
    ],
)
def test_resolve_charset(label: str | None, codec: str | None) -> None:
    assert resolve_charset(label) == codec


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

# ── mojibake ───────────────────────────────────────────────────────────────

PAGE = "<title>It’s a café — 北京</title><p>Zürich, naïve, 😀, “quoted”, ½ € ™ </p>"


@pytest.mark.parametrize("charset", ["cp1252", "latin-1"])
def test_utf8_read_as_a_legacy_charset_is_repaired(charset: str) -> None:
    garbled = PAGE.encode().decode(charset, "extract_trt.cp1252")  # what a crawler trusting the wrong header made
    assert garbled != PAGE and ("â€™" in garbled or "â\x80\x99" in garbled)
    assert repair_mojibake(garbled) == PAGE


def test_utf8_misread_twice_is_repaired() -> None:
    twice = PAGE.encode().decode("cp1252", "extract_trt.cp1252").encode().decode("cp1252", "extract_trt.cp1252")
    assert repair_mojibake(twice) == PAGE


def test_a_repaired_bom_is_dropped() -> None:
    assert repair_mojibake("ï»¿<p>cafÃ©</p>") == "<p>café</p>"


@pytest.mark.parametrize(
    "text",
    [
        PAGE,  # right already
        "<p>plain ASCII</p>",
        "<p>Café, Zürich, Øre, déjà vu: Latin-1 written as such</p>",  # accented letters beside ASCII: not UTF-8
        "<p>Itâ€™s broken here</p><p>but “right” here — 北京</p>",  # some of it decoded right: left alone
        "<p>Ã</p>",  # a lead byte without its continuation
        "<p>\ud800 lone surrogate Ã©</p>",
        "",
    ],
)
def test_text_that_is_not_wholly_mojibake_is_kept(text: str) -> None:
    assert repair_mojibake(text) == text


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_repair_never_raises_and_undoes_a_misreading(text: str) -> None:
    assert isinstance(repair_mojibake(text), str)
    if "\ufeff" not in text and not any("\ud800" <= c <= "\udfff" for c in text):
        garbled = text.encode().decode("cp1252", "extract_trt.cp1252")
        assert repair_mojibake(garbled) == repair_mojibake(text)


@settings(max_examples=200, deadline=None)
@given(
    st.binary(max_size=300),
    st.none()
    | st.sampled_from(["text/html", "text/html; charset=utf-8", "text/html; charset=shift_jis", "charset=bogus"]),
)
def test_any_bytes_decode_to_text(data: bytes, content_type: str | None) -> None:
    out = decode_html(data, content_type)
    assert isinstance(out, str)
    assert not out.startswith("\ufeff")
