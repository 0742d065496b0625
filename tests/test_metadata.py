"""Page metadata (runtime/html/metadata.py): the sources in their order of trust on hand-written pages, date
normalisation, the YAML front matter's safety, the Extractor switch, and real wcxb-dev pages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from extract_trt import Extractor, PageMetadata
from extract_trt.eval.datasets import read_dataset
from extract_trt.eval.metrics import metadata_outcome
from extract_trt.runtime.html.metadata import (
    block_author,
    block_date,
    detect_language,
    extract_metadata,
    front_matter,
    normalize_date,
    script_date,
    url_date,
)
from extract_trt.runtime.html.simplify import simplify
from extract_trt.train.data import split_of

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
BODY = "<p>" + "Plain words about gardens and the weather, written in English for this test. " * 4 + "</p>"


def meta_of(html: str, url: str | None = "https://example.com/post") -> PageMetadata:
    page = simplify(html)
    return extract_metadata(page.page_map.root, html, url, page.blocks)


def page(head: str = "", body: str = BODY) -> str:
    return f"<html lang='en-GB'><head>{head}</head><body>{body}</body></html>"


JSON_LD = {
    "@context": "https://schema.org",
    "@graph": [
        {"@type": "WebSite", "@id": "https://example.com/#site", "name": "Example Gardens"},
        {"@type": "Person", "@id": "https://example.com/#ann", "name": "Ann Smith"},
        {
            "@type": "BlogPosting",
            "headline": "How to grow tomatoes",
            "author": {"@id": "https://example.com/#ann"},
            "datePublished": "2024-03-15T08:30:00Z",
            "dateModified": "2024-04-01",
            "articleSection": ["Gardening"],
            "keywords": "tomatoes, summer",
            "image": {"@type": "ImageObject", "url": "/img/tomato.jpg"},
            "license": "https://creativecommons.org/licenses/by/4.0/",
        },
    ],
}


def test_json_ld_first_with_graph_and_id_references() -> None:
    head = (
        f'<script type="application/ld+json">{json.dumps(JSON_LD)}</script>'
        '<meta property="og:title" content="Tomatoes | Example Gardens">'
        '<meta name="author" content="Someone Else"><meta property="og:site_name" content="Example Gardens">'
        '<link rel="canonical" href="/grow-tomatoes"><title>Tomatoes - Example Gardens</title>'
    )
    md = meta_of(page(head))
    assert md.title == "How to grow tomatoes"
    assert md.author == "Ann Smith"  # JSON-LD (an @id reference) before <meta name=author>
    assert md.date == "2024-03-15T08:30:00+00:00"
    assert md.date_modified == "2024-04-01"
    assert md.sitename == "Example Gardens"
    assert md.categories == ["Gardening"] and md.tags == ["tomatoes", "summer"]
    assert md.canonical_url == "https://example.com/grow-tomatoes"
    assert md.image == "https://example.com/img/tomato.jpg"
    assert md.license == "https://creativecommons.org/licenses/by/4.0/"
    assert md.language == "en-GB"
    d = md.as_dict()
    assert json.loads(json.dumps(d)) == d and set(d) >= {"title", "date", "categories", "language_detected"}


def test_json_ld_too_deep_to_parse_is_skipped_not_an_error() -> None:
    """A JSON-LD block nested beyond the JSON parser's stack gives no metadata; the page is still extracted,
    and the next block's objects are read (in document order, ``@graph`` members in place)."""
    deep = '<script type="application/ld+json">' + '{"a":' * 5_000 + "1" + "}" * 5_000 + "</script>"
    graph = {"@graph": [[{"@type": "WebSite", "name": "Site"}], {"@type": "Article", "headline": "From the graph"}]}
    head = deep + f'<script type="application/ld+json">{json.dumps(graph)}</script>'
    result = Extractor(output="text", metadata=True).extract(page(head))
    assert result.error is None and "gardens" in result.text
    assert result.metadata.title == "From the graph" and result.metadata.sitename == "Site"


def test_opengraph_and_dublin_core_when_no_json_ld() -> None:
    head = (
        '<meta property="og:title" content="Tomatoes in pots | Example Gardens">'
        '<meta property="og:site_name" content="Example Gardens">'
        '<meta name="DC.creator" content="Bob Jones">'
        '<meta property="article:published_time" content="2023-07-04T10:00:00-05:00">'
        '<meta property="article:tag" content="pots"><meta property="article:tag" content="balcony">'
        '<meta name="description" content="Small space gardening.">'
    )
    md = meta_of(page(head))
    assert md.title == "Tomatoes in pots"  # the site name part is dropped
    assert md.author == "Bob Jones"
    assert md.date == "2023-07-04T10:00:00-05:00"
    assert md.tags == ["pots", "balcony"]
    assert md.description == "Small space gardening."


def test_microdata_time_byline_and_rel_links() -> None:
    body = (
        '<article itemscope itemtype="https://schema.org/Article"><h1 itemprop="headline">Pruning roses</h1>'
        '<span itemprop="author" itemscope><span itemprop="name">Carla Diaz</span></span>'
        '<time datetime="2022-11-05" pubdate>5 Nov</time>' + BODY +
        '<a rel="tag" href="/t/roses">roses</a><a rel="category tag" href="/c/flowers">Flowers</a>'
        '<a rel="license" href="/licence">Licence</a></article>'
    )
    md = meta_of(page("<title>Pruning roses — Example</title>", body))
    assert md.title == "Pruning roses"
    assert md.author == "Carla Diaz"
    assert md.date == "2022-11-05"
    assert md.tags == ["roses"] and md.categories == ["Flowers"]
    assert md.license == "https://example.com/licence"


def test_byline_class_and_date_block_after_h1() -> None:
    body = '<h1>Winter sowing</h1><div class="post-author">By Dana Lee</div><div><span>March 3rd, 2021</span></div>' + BODY
    md = meta_of(page("<title>Winter sowing</title>", body), url="https://example.com/winter-sowing")
    assert md.author == "Dana Lee"
    assert md.date == "2021-03-03"


@pytest.mark.parametrize(
    "byline,author",
    [("View all posts by Ray Ansari", "Ray Ansari"), ("Author: Mia Chen", "Mia Chen"), ("Written by", None),
     ("About the author", None)],
)
def test_a_bylines_label_is_no_name(byline: str, author: str | None) -> None:
    body = f'<h1>Winter sowing</h1><div class="post-author">{byline}</div>' + BODY
    assert meta_of(page("<title>Winter sowing</title>", body)).author == author


@pytest.mark.parametrize(
    "byline,author",
    [
        ("By Amy Wilhelm", "Amy Wilhelm"),
        ("Written by: Meghan Neville | Content Marketing", "Meghan Neville"),
        ("Posted by BeauHD on Tuesday", "BeauHD"),
        ("By Sofia Gonzalez December 12, 2024", "Sofia Gonzalez"),  # a date after the name
        ("By Theresa May", "Theresa May"),  # a month-like name without a date after it
        ("By Ursula von der Leyen, 3 min read", "Ursula von der Leyen"),
        ("Par Jean Dupont le 3 mars", "Jean Dupont"),
        ("By clicking accept you agree", None),  # not a name: lower-case words
        ("By Feb 3, 2024", None),
        ("Written by", None),
    ],
)
def test_a_byline_in_the_text_names_the_author(byline: str, author: str | None) -> None:
    """Where no markup names the author, a short block near the <h1> that is a byline does (class names no author)."""
    body = f"<h1>Winter sowing</h1><p>{byline}</p>" + BODY
    assert meta_of(page("<title>Winter sowing</title>", body)).author == author
    assert block_author(simplify(page("", body)).blocks) == author


def test_a_byline_far_from_the_h1_or_under_markup_s_author_is_not_read() -> None:
    far = "<h1>Winter sowing</h1>" + BODY * 13 + "<p>By Amy Wilhelm</p>"
    assert meta_of(page("", far)).author is None
    marked = '<h1>Winter sowing</h1><p>By Amy Wilhelm</p>' + BODY
    assert meta_of(page('<meta name="author" content="Dana Lee">', marked)).author == "Dana Lee"


def test_head_scripts_stay_unbuilt_and_the_page_map_is_unchanged() -> None:
    """The head is read without building its scripts and styles: a <meta> after a large inline script is
    still read, and the page's map (what reconstruction serialises) is the same as without metadata."""
    fake = ", ".join(f'"k{i}": "<meta name=author content=Wrong>"' for i in range(200))
    script = "<script>var state = {" + fake + "};</script>"
    html = page(script + '<style>p { color: red }</style><meta name="author" content="Eve Adams">')
    plain = simplify(html)
    read = simplify(html)
    md = extract_metadata(read.page_map.root, html, None, read.blocks)
    assert md.author == "Eve Adams"
    head = next(kid for kid in read.page_map.root.children if kid.tag == "head")
    assert [kid.tag for kid in head.children if kid.lazy is not None] == ["script", "style"]
    assert read.page_map.map_html() == plain.page_map.map_html()


def test_url_date_and_script_data() -> None:
    assert meta_of(page(), url="https://blog.example.org/2019/05/07/a-post/").date == "2019-05-07"
    script = '<script>window.__DATA__={"post":{"publishedAt":"2020-02-29T12:00:00Z"}}</script>'
    assert meta_of(page(body=script + BODY)).date == "2020-02-29T12:00:00+00:00"
    # a structured date a day off the URL's: the URL's (the publisher's local day) wins
    head = '<meta property="article:published_time" content="2025-12-19T02:41:41+00:00">'
    assert meta_of(page(head), url="https://x.example/2025/12/18/post/").date == "2025-12-18"


def test_a_sole_h1_is_the_title_unless_it_is_a_link() -> None:
    head = '<meta property="og:title" content="Best Tomato Cages of 2026: Top 7 Picks • Example Gardens">'
    assert meta_of(page(head, "<h1>The cages that held up</h1>" + BODY)).title == "The cages that held up"
    # a logo in an <h1>, or two <h1>s: the structured title, its site part cut when an <h1> is one
    logo = '<h1><a href="/">Example Gardens</a></h1>'
    assert meta_of(page(head, logo + BODY)).title == "Best Tomato Cages of 2026: Top 7 Picks • Example Gardens"
    head = '<meta property="og:title" content="Tomato cages | Example Gardens">'
    assert meta_of(page(head, logo + "<h1>Tomato cages</h1>" + BODY)).title == "Tomato cages"


def test_title_falls_back_to_the_first_main_heading() -> None:
    result = Extractor(labeler="heuristic", metadata=True).extract(page(body="<h2>Only a heading</h2>" + BODY))
    assert result.error is None and result.metadata.title == "Only a heading"


@pytest.mark.parametrize(
    "value,expected",
    [
        ("2024-03-15", "2024-03-15"),
        ("2024-03-15T08:30:00.123+0200", "2024-03-15T08:30:00+02:00"),
        ("2024/3/5", "2024-03-05"),
        ("Mon, 12 Feb 2024 10:00:00 GMT", "2024-02-12T10:00:00+00:00"),
        ("February 12, 2024", "2024-02-12"),
        ("12th Feb. 2024", "2024-02-12"),
        ("2023 Jan 7", "2023-01-07"),
        ("Published: 23. Juli 2017", "2017-07-23"),
        ("VON MORITZ GATHMANN am 21. April 2020", "2020-04-21"),
        ("Par Loïc Le Clerc | 30 septembre 2018", "2018-09-30"),
        ("12 de febrero de 2024", "2024-02-12"),
        ("2012年06月04日 10:35 来源：新华网", "2012-06-04"),
        ("发布于2012年6月4日", "2012-06-04"),
        ("2024년 2월 12일", "2024-02-12"),
        ("２０２４年３月１５日", "2024-03-15"),
        ("٢٠٢٤-٠٣-١٥", "2024-03-15"),
        ("12 set 2020", None),
        ("2024-02-30", None),
        ("1850-01-01", None),
        ("yesterday", None),
        ("", None),
    ],
)
def test_normalize_date(value: str, expected: str | None) -> None:
    assert normalize_date(value) == expected


def test_url_script_and_block_date_helpers() -> None:
    assert url_date("https://x.org/2024-03-15-title") == "2024-03-15"
    assert url_date("https://x.org/20240315/title") == "2024-03-15"
    assert url_date("https://x.org/2024/03/title") is None  # no day: nothing invented
    assert url_date("https://x.org/product/20241399") is None
    assert script_date('{"datePublished":"not a date","publishDate":"2021-06-01"}') == "2021-06-01"
    assert script_date('"title":"x"') is None
    # the most trusted key wins wherever it is in the page; among its matches, the first valid one
    assert script_date('{"pubDate":"2019-01-01"} {"datePublished":"x","datePublished":"2020-02-02"}') == "2020-02-02"
    assert script_date('{"publishedAt":"2021-01-01","published_at":"2022-02-02"}') == "2022-02-02"
    assert script_date("first_publication_date: '2018-07-01T10:00:00Z'") == "2018-07-01T10:00:00+00:00"
    blocks = simplify("<html><body><p>intro</p><h1>T</h1><p>Updated: Jan 2, 2020</p></body></html>").blocks
    assert block_date(blocks) == "2020-01-02"


def test_detect_language() -> None:
    assert detect_language("Der Garten ist im Sommer sehr schön und die Kinder spielen dort jeden Tag.") == "de"
    assert detect_language("too short") is None


def test_detect_language_reads_a_long_text_by_its_start() -> None:
    german = "Der Garten ist im Sommer sehr schön und die Kinder spielen dort jeden Tag mit dem Hund. "
    english = "The garden is lovely in summer and the children play there every day with the dog. "
    assert detect_language(german * 60) == "de"  # 5,000 characters: the first 300 decide
    assert detect_language(german * 4 + english * 60) == "de"  # what follows the start is not read
    assert detect_language(english * 4 + german * 60) == "en"


def test_language_detection_stops_early_only_on_a_clear_start() -> None:
    """The first 100 characters answer when one language leads by far; an unclear start (release notes,
    a sentence of another language) leaves it to the first 300, as py3langid answers on them."""
    py3langid = pytest.importorskip("py3langid")
    from extract_trt.runtime.html import metadata

    german = "Der Garten ist im Sommer sehr schön und die Kinder spielen dort jeden Tag mit dem Hund. "
    english = "The garden is lovely in summer and the children play there every day with the dog. "

    def lead(text: str) -> float:  # the best language's log-probability lead on the first 100 characters
        scores = sorted(metadata._identifier._decide(text[: metadata._QUICK_CHARS]).tolist())
        return scores[-1] - scores[-2]

    clear = german * 5
    unclear = ["Release 2.4.1 (#1234) numpy>=1.26 CHANGELOG.md v3.0 " * 2 + german * 5, english[:60] + german * 5]
    assert detect_language(clear) == "de" and lead(clear) >= metadata._QUICK_LEAD
    for text in unclear:
        assert lead(text) < metadata._QUICK_LEAD  # the start alone would say "en"
        assert detect_language(text) == py3langid.classify(text[: metadata._DETECT_CHARS])[0] == "de"


def test_language_detection_matches_py3langid() -> None:
    """The identifier behind detect_language (py3langid's model, its automaton's tables as flat arrays)
    gives py3langid's own answer."""
    py3langid = pytest.importorskip("py3langid")
    texts = [
        "Der Garten ist im Sommer sehr schön und die Kinder spielen dort jeden Tag.",
        "Le jardin est très beau en été et les enfants y jouent tous les jours avec le chien.",
        "El jardín es muy bonito en verano y los niños juegan allí todos los días con el perro.",
        "Ogród jest latem bardzo piękny, a dzieci bawią się w nim codziennie z psem sąsiadów.",
        "夏天的花园非常美丽，孩子们每天都在那里和狗一起玩耍，邻居们也经常来这里散步和聊天。",
        "Летом сад очень красив, и дети каждый день играют там с собакой и соседскими друзьями.",
        "Release notes 2.4.1: fixed crash in parser (#1234), bumped numpy>=1.26, see CHANGELOG.md",
    ]
    for text in texts:
        assert detect_language(text) == py3langid.classify(text)[0], text


# ── front matter ──────────────────────────────────────────────────────────────────────────────────


def parse_front_matter(text: str) -> dict:
    assert text.startswith("---\n")
    end = text.index("\n---\n", 3)
    return yaml.safe_load(text[4:end])


def test_front_matter_keeps_hostile_values_inside_their_scalars() -> None:
    title = 'A "title"\n---\nauthor: injected\n# not a comment \u2028 \x85 \x9f: [x] {y} & *z'
    md = PageMetadata(title=title, author="O'Neil", tags=["a, b", "---"], date="2024-01-02")
    text = front_matter(md) + "# Body\n"
    parsed = parse_front_matter(text)
    assert parsed == {"title": title, "author": "O'Neil", "tags": ["a, b", "---"], "date": "2024-01-02"}
    assert text.count("\n---\n") == 1 and text.endswith("---\n\n# Body\n")


def _without_surrogates(text: str) -> str:
    return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1), st.lists(st.text(max_size=20), min_size=1, max_size=3))
def test_front_matter_round_trips_any_text(title: str, tags: list[str]) -> None:
    parsed = parse_front_matter(front_matter(PageMetadata(title=title, tags=tags)) + "body\n---\n")
    assert parsed == {"title": _without_surrogates(title), "tags": [_without_surrogates(t) for t in tags]}


# ── the Extractor and real pages ──────────────────────────────────────────────────────────────────


def test_extractor_switch() -> None:
    html = page('<meta property="og:title" content="Switch">')
    on = Extractor(labeler="heuristic", metadata=True).extract(html)
    assert on.metadata is not None and on.metadata.title == "Switch" and "metadata" in on.timings
    assert on.metadata.language_detected == "en"
    off = Extractor(labeler="heuristic").extract(html)  # off by default
    assert off.metadata is None and "metadata" not in off.timings
    assert off.markdown == on.markdown  # reading metadata does not change the extraction
    failed = Extractor(labeler="heuristic", metadata=True).extract(b"")
    assert failed.error is not None and failed.metadata is None


@pytest.mark.skipif(not (DATA / "wcxb-dev.jsonl.gz").exists(), reason="shared data not present")
def test_real_pages_agree_with_wcxb_ground_truth() -> None:
    """The first 60 wcxb-dev pages outside the validation domains: most titles, authors and dates match."""
    records = [r for r in read_dataset(DATA / "wcxb-dev.jsonl.gz", limit=60) if split_of(r.url or "") != "validation"]
    extractor = Extractor(labeler="heuristic", metadata=True)
    outcomes: dict[str, list[str]] = {"title": [], "author": [], "date": []}
    for record, result in zip(records, extractor.extract_many({"url": r.url, "html": r.html} for r in records)):
        assert result.error is None
        for name, truth in record.metadata.items():
            outcomes[name].append(metadata_outcome(getattr(result.metadata, name), truth, name))
    for name, got in outcomes.items():
        correct = sum(o in ("exact", "normalised") for o in got) / len(got)
        assert len(got) >= 20 and correct >= 0.6, (name, got)
