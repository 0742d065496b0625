"""Reader-comment sections: which blocks of a page belong to one (labelled ``comment``, not ``main``).

A comment section is found from markup conventions, not from a model: an element whose ``id`` or
``class`` names a comment container (``#comments``, ``.comment-list``/``.commentlist``, ``.comments-area``,
``#disqus_thread``, ``.fb-comments``, WordPress's ``#respond`` form …), a schema.org ``Comment`` or
``UserComments`` item, or ``itemprop="comment"``. A block is in a section when its element or one of its
ancestors is such a container, accepted by the rules below. Only blocks whose own or nearest ancestors'
class/id names hint at comments are looked up (for speed): a section marked only by schema.org
attributes, with no comment-like name near its blocks, is not found. Names that only *mention* comments — a
``comment-count`` or ``comments-link`` in a teaser, ``no-comments`` — do not open a section. Where the markup
names no section the page takes (the blogs and news sites of the 2000s named their markup little, or not in
English), a heading may: one that counts the comments ("27 commentaires", "3 thoughts on …") or titles the
reply form ("Leave a Reply") opens a section that runs to the next heading of its rank, or the page's end
(:func:`comment_heading`).

A forum thread or Q&A page is not an article with comments: its posts *are* the page, so a section is
only taken as comments when the page does not declare itself a thread, its posts are not separate comment
items side by side, the page has its own content before the section and not much more of it after (see
:func:`comment_mask`). Called after the labeler: the labels decide what the
page's content is, the markup decides what the comment section is.

Convention (the model card states it): comments are the readers' replies under an article or a blog post,
including WordPress/Disqus/Facebook threads and the reply form around them, and the customer reviews on a
product page. A page is a product page when it declares itself one
(:func:`~extract_trt.runtime.html.declared.declares_product`: a schema.org ``Product`` in JSON-LD or
microdata, or ``og:type`` ``product``, and not ``og:type`` ``article``); there a ``reviews`` or
``testimonials`` container is a section like a comment list, each review side by side with the next. Elsewhere
a reviews container closes any section inside it: editorial reviews ("The best dishwashers of 2025"), course
and service testimonials, and WooCommerce's reviews tab, which reuses WordPress's comment markup, stay with
the page.
"""

from __future__ import annotations

import re

import numpy as np

from extract_trt.runtime.html.dom import Node, up_to_memo, word_count
from extract_trt.runtime.types import HEADING_TAGS, Block, PageBlocks

__all__ = [
    "CommentSections", "comment_heading", "comment_mask", "is_comment_container", "is_taxonomy_class",
    "is_wordpress_post",
]  # fmt: skip

# "Comment(s)" in the languages whose sites name their markup in their own words: French commentaires,
# Italian commenti, Spanish/Portuguese comentarios, German/Scandinavian kommentare/kommentarer, Polish komentarze,
# Czech/Slovak/Croatian komentare/komentari, Dutch reacties, Turkish yorumlar. Plurals only outside English: a
# German "Kommentar" or a Spanish "comentario" is also an editorial column, and "commentary" is one in English.
_COMMENT_WORD = (
    r"(?:comments?|commentaires|commenti|comentarios|comentários|kommentare|kommentarer|komentarze|komentari|"
    r"komentare|reacties|yorumlar)"
)
# A class/id token that names a comment container: "comments", "comment-list", "post-comments",
# "comments_area", "commentlist", "commentbox", "kommentare", "disqus_thread", "fb-comments", "wpdiscuz…", "dsq-…"
# (Disqus's older markup): the suffix written apart or on. CamelCase names are split around "Comments" first
# ("allCommentsArea" reads as "all-comments-area").
_CONTAINER = re.compile(
    r"^(?:[a-z0-9]+[-_])*" + _COMMENT_WORD + r"(?:[-_]?(?:list|area|section|container|wrapper|wrap|block|thread|"
    r"holder|box|inner|outer|content|body|text|main|feed|respond|form|reply|replies))?$"
    r"|^respond$|^disqus_thread$|^dsq[-_]|^wpdiscuz|^fb-comments$"
)
# Tokens that match the pattern above but only mention comments (a link, a counter, "comments closed"):
# never a section; nor is a post's category or tag ("tag-comments", :func:`is_taxonomy_class`).
_NOT_CONTAINER = re.compile(
    r"count|link|number|num$|icon|btn|button|toggle|bubble|closed|^no[-_]|nocomment|meta$|popup"
)
_SCHEMA_TYPES = ("schema.org/Comment", "schema.org/UserComments")
# Customer reviews and testimonials ("reviews", "product-review__body", "review_box", "yotpo-reviews"): a
# section on a product page; elsewhere nothing inside one opens a section (WooCommerce and others reuse
# WordPress's comment markup, #comments and .commentlist, inside their reviews tab).
_REVIEWS = re.compile(r"(?:^|[-_])(?:reviews?|testimonials?)(?:[-_]|$)")
_TAXONOMY = re.compile(r"^(?:tag|category)[-_]")  # a post's tags and categories, written as classes
# A token the section's reply form carries: its blocks leave the main content but are not comment text.
_FORM = re.compile(r"^(?:(?:comment[-_])?respond|comment[-_]?form(?:[-_](?:wrap|wrapper|container))?|reply[-_]?form)$")
# A page that declares itself a thread (a forum topic, a Q&A page) has posts, not comments, whatever
# their markup says: no section is taken as comments on it.
_THREAD_TYPES = re.compile(r"schema\.org/(?:DiscussionForumPosting|QAPage|Question|Answer)\b")

# A section is taken as comments when the page's own content before it holds at least this many words (two CJK
# characters a word: dom.word_count) …
MIN_CONTENT_WORDS = 40
# … and the page's content after it is at most this share of the content before it (else the "comments"
# are interleaved with the content: per-answer comments on a Q&A page, a thread of posts).
MAX_CONTENT_AFTER = 0.25
# A section's block is comment text when this many of its characters are not link text ("Reply", "Load
# more comments", pagination are links; "Marta says: <a>March 3, 2024</a>" is not).
MIN_OWN_CHARS = 8
# Top-level sections side by side (one parent) from this many on: the page is a list of posts, not an
# article's comments (a comment list has one container around its comments).
MAX_SIBLING_SECTIONS = 3
# Comment containers a block's chain keeps: the outermost and the innermost ones (threaded replies nest one
# container per level, WordPress's deepest setting is 10). Each element's chain is memoised, so 5,000
# nested replies cost 5,000 chains of up to 5,000 (215 MB, 1.4 s) before this cap.
MAX_NESTED_SECTIONS = 32

# A heading that opens a comment section by its words, where no markup names one (sites of the 2000s, markup
# named in no language): a count of comments ("27 commentaires", "1 Kommentar", "Komentarze (9)", "12
# комментариев", "12条评论", "3件のコメント", WordPress's "3 thoughts on “…”" and "12 Responses to “…”"), a
# plural name alone outside English ("Kommentare", "Комментарии", "Yorumlar", "网友评论"; an English "Comments"
# also heads a guide's section on code comments, a German "Kommentar" or a Chinese "评论" an editorial column) or
# the reply form's title ("Leave a Reply", "Kommentar verfassen", "发表评论", "コメントを残す", WordPress's own
# translations among them). Also Ukrainian, Romanian, Hungarian, Greek, Vietnamese, Arabic, Hebrew, Persian, Hindi
# and Thai: the comment words of the web's larger languages, where sites wrote them in their headings.
_HEADING_WORD = (
    r"(?:comments?|kommentare?|commentaires?|commenti|commento|comentarios?|comentários?|komentarze?|reacties|"
    r"комментари[йяиев]{1,2}|коментар[іяів]{0,2}|yorum(?:lar)?|komentář[eů]?|comentarii|hozzászólás(?:ok)?|σχόλια|"
    r"bình luận|تعليقات|التعليقات|תגובות|نظرات|टिप्पणिया[ँं]|ความคิดเห็น)"
)
# Chinese, Japanese and Korean write no space between a count and its noun, so "\b" cannot end the word there.
_CJK_HEADING_WORD = r"(?:评论|評論|留言|跟贴|跟帖|コメント|댓글)"  # 跟贴: the replies under a Chinese portal's story
_COMMENT_HEADING = re.compile(
    r"\s*(?:\(?\d+\)?\s+" + _HEADING_WORD + r"(?!\w)"
    r"|\d+\s+(?:thoughts?|responses?)\s+(?:on|to)\s+[\"'“”„«‘]"
    r"|" + _HEADING_WORD + r"\s*(?:[(\[:]\s*)?\d+\s*(?:[)\]]\s*)?$"
    r"|\d+\s*(?:(?:条|條|则|則|个|個|件の|개의)\s*)?" + _CJK_HEADING_WORD +
    r"|" + _CJK_HEADING_WORD + r"\s*(?:[(\[（:：]\s*)?\d+\s*(?:(?:条|條|件|개)\s*)?(?:[)\]）]\s*)?$"
    r"|(?:leserkommentare|reader comments|user comments|kommentare|commentaires|commenti|comentarios|komentarze"
    r"|комментарии|коментарі|yorumlar|komentáře|comentarii|hozzászólások|σχόλια|bình luận|التعليقات|תגובות|نظرات|"
    r"टिप्पणिया[ँं]|ความคิดเห็น|网友评论|網友評論|读者评论|讀者評論|全部评论|最新评论|热门评论|精彩评论|"
    r"网友跟贴|网友跟帖|コメント一覧|コメント|댓글)\s*$"
    r"|(?:leave a (?:reply|comment)|post a comment|add a comment|write a comment|kommentar (?:verfassen|schreiben)"
    r"|schreibe einen kommentar|laisser un commentaire|deja un comentario|deja una respuesta|lascia un commento"
    r"|dodaj komentarz|deixe (?:um comentário|uma resposta)|geef een reactie|plaats een reactie"
    r"|(?:оставить|добавить|написать) комментарий|залишити коментар|yorum (?:yap|yaz)|bir yanıt yazın"
    r"|napsat komentář|lasă un răspuns|αφήστε μια απάντηση|(?:để lại|viết) bình luận|tinggalkan balasan"
    r"|اترك تعليقا|أضف تعليقا|أضف تعليق|ارسال نظر|टिप्पणी करें"
    r"|发表评论|發表評論|我要评论|发表留言|我要留言|发表回复|發表回覆|コメントを(?:書く|残す|する)|コメントの投稿|댓글\s*(?:쓰기|남기기|달기))"
    r"(?!\w))",
    re.IGNORECASE,
)
MAX_HEADING_CHARS = 120  # a longer "heading" is a title that mentions comments


def _heads_comments(text: str) -> bool:
    """Whether a heading's ``text`` opens (or goes on with) a comment section by its words."""
    return len(text) <= MAX_HEADING_CHARS and _COMMENT_HEADING.match(text) is not None


# Substrings that every comment-container (or reply-form) token and every reviews token holds: most
# elements have none and are passed over without splitting their names into tokens. (Plain substring
# tests: an alternation regex is ten times slower here, where most strings hold none of them.)


def _hints_comments(names: str) -> bool:
    return (
        "comment" in names or "coment" in names or "komment" in names or "komentar" in names or "respond" in names
        or "reacties" in names or "yorumlar" in names or "disqus" in names or "dsq" in names or "wpdiscuz" in names
    )  # fmt: skip


def _hints_reviews(names: str) -> bool:
    return "review" in names or "testimonial" in names


# A camelCase name is split around "Comments" and "Reviews" only ("allCommentsArea", "CommentsItem", Okendo's
# "okeReviews-…"): a singular "authorComment" or "editorComment" is as often an author's box or an editor's note.
_CAMEL = re.compile(r"(?<=[a-z])(?=Comments|Reviews)|(?<=Comments)(?=[A-Z])|(?<=Reviews)(?=[A-Z])")


def _names(attrs: dict[str, str]) -> str:
    """The element's class and id values, lower case, with a ``-`` at each camelCase boundary of "Comments"
    and "Reviews"."""
    names = f"{attrs.get('class', '')} {attrs.get('id', '')}"
    if "Comments" in names or "Reviews" in names:  # the substring tests first: most names have neither
        names = _CAMEL.sub("-", names)
    return names.lower()


def is_comment_container(attrs: dict[str, str]) -> bool:
    """Whether an element with ``attrs`` is a comment container by the conventions above."""
    return _is_container(attrs, _names(attrs))


def _is_container(attrs: dict[str, str], names: str) -> bool:
    itemtype = attrs.get("itemtype")
    if itemtype and any(t in itemtype for t in _SCHEMA_TYPES):
        return True
    if "itemprop" in attrs and attrs["itemprop"].lower() == "comment":
        return True
    if not _hints_comments(names) or is_wordpress_post(names):
        return False
    return any(
        _CONTAINER.match(t) and not _NOT_CONTAINER.search(t) and not is_taxonomy_class(t) for t in names.split()
    )


def is_wordpress_post(names: str) -> bool:
    """Whether ``names`` (an element's class and id values, lower case) are a WordPress post's class list."""
    # WordPress's post classes ("hentry", "status-publish") list the post's taxonomy terms, a custom
    # taxonomy's without a "tag-"/"category-" prefix ("internet-estallido-comentarios"): the post, no section
    return "hentry" in names or "status-publish" in names


def is_taxonomy_class(token: str) -> bool:
    """Whether a class token (lower case) names a post's tag or category, as WordPress writes them
    ("tag-comments", "category-disclaimer"): a word of the post's topic, not of what the element is."""
    return _TAXONOMY.match(token) is not None


def _is_reviews(names: str) -> bool:
    # not schema.org Review: SEO plugins put it on whole articles
    if not _hints_reviews(names):
        return False
    return any(_REVIEWS.search(t) and not is_taxonomy_class(t) for t in names.split())


def _is_form(names: str) -> bool:
    return ("respond" in names or "form" in names) and any(_FORM.match(t) for t in names.split())


class CommentSections:
    """The comment containers above each block, outermost first (at most :data:`MAX_NESTED_SECTIONS`: the
    outermost and the innermost), and whether the block lies in a reply form or in a thread (memoised per
    element, so a page is one walk up from each block to the nearest element already seen). With
    ``reviews`` (a product page), a reviews container is a comment container too, and :attr:`reviews`
    collects the ones met."""

    def __init__(self, reviews: bool = False) -> None:
        self.with_reviews = reviews
        self.reviews: set[Node] = set()
        # element → (containers at or above it, outermost first; in a reply form; in a thread; in reviews)
        self._memo: dict[Node, tuple[tuple[Node, ...], bool, bool, bool]] = {}

    def of(self, node: Node) -> tuple[tuple[Node, ...], bool, bool]:
        memo = self._memo
        path, found = up_to_memo(node, memo)
        chain, in_form, in_thread, in_reviews = found or ((), False, False, False)
        for el in path:  # from the top down
            attrs = el.attrs
            if attrs:
                names = _names(attrs) if "class" in attrs or "id" in attrs else ""
                if el.tag != "body" and _is_reviews(names):  # body classes name every plugin a site runs
                    if not self.with_reviews:
                        in_reviews = True
                    elif not chain:
                        chain = (el,)
                        self.reviews.add(el)
                elif not in_reviews and _is_container(attrs, names):
                    chain = (*chain, el) if len(chain) < MAX_NESTED_SECTIONS else (chain[0], *chain[2:], el)
                if chain and not in_form:
                    in_form = _is_form(names)
                itemtype = attrs.get("itemtype")
                if itemtype is not None and not in_thread:
                    in_thread = _THREAD_TYPES.search(itemtype) is not None
            if chain and el.tag == "form":
                in_form = True
            memo[el] = (chain, in_form, in_thread, in_reviews)
        return chain, in_form, in_thread


def _posts_in_a_row(tops: set[Node]) -> bool:
    """Whether :data:`MAX_SIBLING_SECTIONS` of the top-level sections share a parent."""
    if len(tops) < MAX_SIBLING_SECTIONS:
        return False
    parents: dict[int, int] = {}
    for node in tops:
        key = id(node.parent)
        parents[key] = parents.get(key, 0) + 1
    return max(parents.values()) >= MAX_SIBLING_SECTIONS


def _hinted(block: Block, reviews: bool) -> bool:
    """Whether the block's class or id, or those of its nearest named ancestors (``Block.ancestor_names``,
    eight of them), hint at comments (or, with ``reviews``, at reviews). Only such blocks are looked up in
    the tree: most blocks of most pages are not, and a search over a few names is much cheaper than the walk."""
    names = f"{block.classes} {block.element_id} {block.ancestor_names}".lower()
    return _hints_comments(names) or (reviews and _hints_reviews(names))


def comment_heading(page: PageBlocks, main: np.ndarray) -> int | None:
    """The index of the page's first heading that opens a comment section in words (:data:`_COMMENT_HEADING`,
    at most :data:`MAX_HEADING_CHARS` characters, mostly not a link: a teaser's "3 Comments" links to them)
    after at least :data:`MIN_CONTENT_WORDS` words of main-labelled content; None when there is none."""
    words = 0
    for i, block in enumerate(page.blocks):
        text = block.text
        if (
            block.tag in HEADING_TAGS and words >= MIN_CONTENT_WORDS and 2 * block.link_text_length < len(text)
            and _heads_comments(text)
        ):  # fmt: skip
            return i
        if words < MIN_CONTENT_WORDS and main[i]:  # only whether the page's content reaches the floor matters
            words += word_count(text)
    return None


def comment_mask(
    page: PageBlocks, main: np.ndarray, reviews: bool = False, thread: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """``(in_section, comment_text)``: per block, whether it lies in an accepted comment section, and
    whether it is comment text (in a section, outside its reply form, not just links). ``reviews``: the
    page is a product page (:func:`~extract_trt.runtime.html.declared.declares_product`), whose customer
    reviews are comments.

    ``main`` (the labeler's decisions) tells where the page's own content is: a section is accepted when
    the page does not declare itself a thread (``thread``: a forum topic or Q&A page anywhere in its source,
    :func:`~extract_trt.runtime.html.declared.declares_thread`; or schema.org ``DiscussionForumPosting``,
    ``QAPage``, ``Question``, ``Answer`` microdata around a block), has fewer than :data:`MAX_SIBLING_SECTIONS` top-level
    sections side by side (each post of a forum thread is its own schema.org ``Comment``; a heading, a reply
    form or a section without text of its own is not counted), and the main-labelled blocks
    before it, outside any section, hold :data:`MIN_CONTENT_WORDS` words and those
    after it at most :data:`MAX_CONTENT_AFTER` of that — a thread whose posts carry comment markup, or
    comments between the answers of a Q&A page, stay as they are.

    A page whose markup names no section may still head one in words (:func:`comment_heading`): then the
    heading and the main-labelled blocks after it are the section (never on a ``thread``).
    """
    n = len(page.blocks)
    in_section = np.zeros(n, dtype=bool)
    text = np.zeros(n, dtype=bool)
    if thread:
        return in_section, text
    id_nodes = page.page_map.id_nodes
    sections = CommentSections(reviews)
    chains: list[tuple[Node, ...]] = [()] * n
    forms = np.zeros(n, dtype=bool)
    in_a_thread = found = False
    for i, block in enumerate(page.blocks):
        node = id_nodes.get(block.item_id) if _hinted(block, reviews) else None
        if node is not None:
            chains[i], forms[i], in_thread = sections.of(node)
            in_a_thread = in_a_thread or in_thread
            found = found or bool(chains[i])
    if in_a_thread:
        return in_section, text
    if not found:
        _mark_heading_section(page, main, thread, in_section, text)
        return in_section, text
    # comment text: a section's block outside its reply form, not only links ("Reply", "Load more comments")
    has_text = [
        bool(chain) and not form and len(block.text) - block.link_text_length >= MIN_OWN_CHARS
        for block, chain, form in zip(page.blocks, chains, forms)
    ]
    # reviews side by side are a product's reviews, not a thread's posts; nor is a section's heading, its reply
    # form (WordPress's classic themes name the list's heading #comments and the form's #respond, each beside the
    # comment list) or an element without text of its own (a sidebar's links to the latest comments, a counter)
    posts = {chain[0] for chain, own in zip(chains, has_text) if own and chain[0].tag not in HEADING_TAGS}
    if _posts_in_a_row(posts - sections.reviews):
        return in_section, text
    words = np.array([word_count(b.text) if m and not c else 0 for b, m, c in zip(page.blocks, main, chains)])
    before = np.cumsum(words)  # main words outside sections up to and including block i
    total = int(before[-1])
    spans: dict[Node, list[int]] = {}  # container → its blocks, in order
    for i, chain in enumerate(chains):
        for section in chain:
            spans.setdefault(section, []).append(i)
    accepted = set()
    for section, members in spans.items():
        content_before = int(before[members[0]])
        content_after = total - int(before[members[-1]])
        if content_before >= MIN_CONTENT_WORDS and content_after <= MAX_CONTENT_AFTER * content_before:
            accepted.add(section)
    if not accepted:  # what the markup names is not the page's comments (a counter at the top, a widget)
        _mark_heading_section(page, main, thread, in_section, text)
        return in_section, text
    for i, chain in enumerate(chains):
        if chain and not accepted.isdisjoint(chain):
            in_section[i] = True
            text[i] = has_text[i]
    return in_section, text


def _mark_heading_section(
    page: PageBlocks, main: np.ndarray, thread: bool, in_section: np.ndarray, text: np.ndarray
) -> None:
    """Marks the section that :func:`comment_heading` opens: the heading and the main-labelled blocks after it,
    up to the next heading (main or not) of the same or a higher rank that does not head comments ("Related
    posts"; a reply form's "Leave a Reply" goes on) or the page's end; comment text as in a named section, the
    reply form's blocks left out of it. Nothing on a page that declares itself a ``thread``."""
    start = None if thread else comment_heading(page, main)
    if start is None:
        return
    in_section[start] = True
    rank = page.blocks[start].tag  # "h1" < "h2" < … < "h6": a lower string is a higher rank
    for i in range(start + 1, len(page.blocks)):
        block = page.blocks[i]
        if block.tag in HEADING_TAGS and block.tag <= rank and not _heads_comments(block.text):
            return  # labelled main or not: the page's outline, not the labels, says where the section ends
        if not main[i]:
            continue
        in_section[i] = True
        in_form = ">form>" in f"{block.tag_path}>"
        text[i] = not in_form and len(block.text) - block.link_text_length >= MIN_OWN_CHARS
