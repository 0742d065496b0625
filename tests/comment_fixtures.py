"""Small pages with and without reader-comment sections, written for the comment tests (CC0: written for
this project). Each mirrors a common real layout: a WordPress article with its comment list and reply
form, a forum thread whose posts carry schema.org ``Comment`` markup, a product page whose customer
reviews reuse WordPress's comment markup (WooCommerce), a product page that declares itself one in JSON-LD
with its reviews side by side, an article whose teaser shows a comment count, and a post in WordPress's classic
theme of 2005-2010 (Kubrick), whose comment list, its heading and the reply form sit side by side, and a blog of
2008 laid out with a table, whose comments only a heading names.
"""

from __future__ import annotations

_ARTICLE_BODY = """
<p>Sourdough starts with a culture of wild yeast and lactic acid bacteria that lives in a simple mix of flour
and water. Feed it every day for a week, keep it somewhere warm, and it will double in size within a few
hours of each feeding, which is the sign that it is ready to raise a loaf.</p>
<p>Mix the levain the night before you bake. In the morning combine it with flour, water and salt, rest the
dough for half an hour, then give it four sets of stretches and folds, thirty minutes apart, until the dough
feels smooth, airy and strong enough to hold its shape on the counter.</p>
<p>Shape the loaf, let it proof in a floured basket in the refrigerator overnight, and bake it in a covered
Dutch oven at a high temperature. Remove the lid after twenty minutes so the crust can brown, and let the
bread cool completely before you slice it, or the crumb will turn gummy.</p>
"""

ARTICLE_WITH_COMMENTS = f"""<!DOCTYPE html><html><head><title>How to bake sourdough bread</title></head><body>
<header class="site-header"><nav><ul><li><a href="/">Home</a></li><li><a href="/recipes">Recipes</a></li>
<li><a href="/about">About</a></li></ul></nav></header>
<main id="main"><article class="post type-post">
<h1 class="entry-title">How to bake sourdough bread at home</h1>
<div class="entry-content">{_ARTICLE_BODY}</div>
</article>
<div id="comments" class="comments-area">
<h2 class="comments-title">3 thoughts on &ldquo;How to bake sourdough bread at home&rdquo;</h2>
<ol class="comment-list">
<li id="comment-11" class="comment even thread-even depth-1"><article class="comment-body">
<footer class="comment-meta"><b class="fn">Marta</b> <span class="says">says:</span>
<a href="#comment-11"><time>March 3, 2024 at 9:12 am</time></a></footer>
<div class="comment-content"><p>My starter took almost two weeks to get going in a cold kitchen, so do not give up
if yours is slow at first. The loaf came out beautifully once it did.</p></div>
<div class="reply"><a class="comment-reply-link" href="#respond">Reply</a></div></article></li>
<li id="comment-12" class="comment odd alt thread-odd depth-1"><article class="comment-body">
<footer class="comment-meta"><b class="fn">Tomasz</b> <span class="says">says:</span></footer>
<div class="comment-content"><p>Could I use whole wheat flour for the levain instead of white flour, or would that
change the timing of the folds too much?</p></div>
<div class="reply"><a class="comment-reply-link" href="#respond">Reply</a></div></article></li>
</ol>
<div id="respond" class="comment-respond"><h3 id="reply-title" class="comment-reply-title">Leave a Reply</h3>
<form id="commentform" class="comment-form" action="/wp-comments-post.php" method="post">
<p class="comment-notes">Your email address will not be published. Required fields are marked</p>
<p class="comment-form-comment"><label for="comment">Comment</label><textarea id="comment" name="comment"></textarea></p>
<p class="form-submit"><input type="submit" value="Post Comment"></p></form></div>
</div>
</main>
<footer class="site-footer"><p>Copyright 2024 The Bread Blog. All rights reserved.</p></footer>
</body></html>"""

FORUM_THREAD = """<!DOCTYPE html><html><head><title>Best tent for winter camping?</title></head><body>
<nav class="breadcrumbs"><a href="/">Forums</a> &gt; <a href="/gear">Gear talk</a></nav>
<div class="thread" itemscope itemtype="https://schema.org/DiscussionForumPosting">
<h1 itemprop="headline">Best tent for winter camping?</h1>
<article class="message" itemprop="comment" itemscope itemtype="https://schema.org/Comment" id="post-1">
<div class="message-user">hikerjoe</div><div class="message-body"><p>I am planning my first winter trip in the
mountains next January and need a tent that can stand up to snow loads and strong wind. What do you use, and is
a four season tent really necessary below the tree line?</p></div></article>
<article class="message" itemprop="comment" itemscope itemtype="https://schema.org/Comment" id="post-2">
<div class="message-user">snowbird</div><div class="message-body"><p>Below the tree line a sturdy three season tent
with a full fly works fine for most trips. Pitch it out of the wind and pack down the snow before you set it up,
and bring a second sleeping pad for insulation from the ground.</p></div></article>
<article class="message" itemprop="comment" itemscope itemtype="https://schema.org/Comment" id="post-3">
<div class="message-user">alpine_anna</div><div class="message-body"><p>Above the tree line I would not go without
a proper four season tent. The extra poles and the lower profile make a big difference when the wind picks up
during the night, and the vestibule gives you room to cook.</p></div></article>
</div>
<footer><p>Forum rules | Privacy | Contact</p></footer>
</body></html>"""

PRODUCT_WITH_REVIEWS = f"""<!DOCTYPE html><html><head><title>Cast iron Dutch oven, 5 quart</title></head><body>
<div class="product"><h1 class="product_title">Cast iron Dutch oven, 5 quart</h1>
<div class="woocommerce-product-details__short-description">{_ARTICLE_BODY}</div>
<div id="reviews" class="woocommerce-Reviews"><div id="comments"><h2>2 reviews for Cast iron Dutch oven</h2>
<ol class="commentlist"><li class="review" id="li-comment-5"><div class="comment-text">
<p>Heavy, even heat, and the lid fits tightly. My bread has never had a better crust than with this pot.</p>
</div></li></ol></div></div></div>
</body></html>"""

_REVIEW = """<div class="review"><div class="review-author">{author}</div><div class="review-rating">5 out of 5</div>
<p class="review-body">{text}</p></div>"""
DECLARED_PRODUCT_WITH_REVIEWS = f"""<!DOCTYPE html><html><head><title>Cast iron Dutch oven, 5 quart</title>
<script type="application/ld+json">{{"@context": "https://schema.org", "@type": "Product",
"name": "Cast iron Dutch oven, 5 quart", "aggregateRating": {{"@type": "AggregateRating", "ratingValue": "4.9"}}}}</script>
</head><body>
<main><h1>Cast iron Dutch oven, 5 quart</h1><div class="description">{_ARTICLE_BODY}</div>
<section id="reviews" class="product-reviews"><h2>Customer reviews</h2>
{_REVIEW.format(author="Dana", text="Heavy, even heat, and the lid fits tightly. My bread has never had a better crust.")}
{_REVIEW.format(author="Lee", text="It arrived well packed and pre-seasoned, and it went straight from the stove to the oven.")}
{_REVIEW.format(author="Sam", text="A little heavy for my wrists, but the stew I made in it was the best in years.")}
</section></main>
<footer><p>Shipping | Returns | Contact</p></footer>
</body></html>"""

TEASER_WITH_COMMENT_COUNT = f"""<!DOCTYPE html><html><head><title>Bread basics</title></head><body>
<article class="post"><h1>Bread basics</h1><div class="entry-content">{_ARTICLE_BODY}</div>
<p class="post-meta comments-link"><a href="/bread#comments">12 comments</a></p>
<div class="no-comments"><p>Comments are closed for this post, but the recipe stays up for everyone to use.</p></div>
</article></body></html>"""

_CLASSIC_COMMENT = """<li class="{alt}" id="comment-{n}"><cite><a href="https://example.org/~{author}" rel="nofollow">{author}</a></cite>
Says:<br /><small class="commentmetadata"><a href="#comment-{n}">June {n}th, 2009 at 10:15 am</a></small><p>{text}</p></li>"""
CLASSIC_THEME_ARTICLE = f"""<!DOCTYPE html><html><head><title>How to bake sourdough bread</title></head><body>
<div id="page"><div id="header"><h1><a href="/">The Bread Blog</a></h1><div class="description">Loaves and notes</div></div>
<div id="content" class="narrowcolumn"><div class="post" id="post-42"><h2>How to bake sourdough bread at home</h2>
<small>June 2nd, 2009 by Anna</small><div class="entry">{_ARTICLE_BODY}</div>
<p class="postmetadata">Posted in <a href="/category/bread">Bread</a></p></div>
<h3 id="comments">3 Responses to &#8220;How to bake sourdough bread at home&#8221;</h3>
<ol class="commentlist">
{_CLASSIC_COMMENT.format(alt="alt", n=4, author="Marta", text="My starter took almost two weeks to get going in a cold kitchen, "
                         "so do not give up if yours is slow at first. The loaf came out beautifully once it did.")}
{_CLASSIC_COMMENT.format(alt="", n=5, author="Tomasz", text="Could I use whole wheat flour for the levain instead of white flour, "
                         "or would that change the timing of the folds too much?")}
{_CLASSIC_COMMENT.format(alt="alt", n=6, author="Lena", text="Thanks for the detailed steps: my first loaf had an open crumb and "
                         "a crackly crust, and the whole family asked for another one the next weekend.")}
</ol>
<h3 id="respond">Leave a Reply</h3>
<form action="/wp-comments-post.php" method="post" id="commentform">
<p><input type="text" name="author" id="author"> <label for="author"><small>Name (required)</small></label></p>
<p><textarea name="comment" id="comment" cols="100" rows="10"></textarea></p>
<p><input name="submit" type="submit" id="submit" value="Submit Comment"></p></form></div>
<div id="sidebar"><ul><li><h2>Pages</h2><ul><li><a href="/about">About</a></li></ul></li></ul></div>
<div id="footer"><p>The Bread Blog is proudly powered by WordPress</p></div></div>
</body></html>"""

# A blog of 2008 laid out with a table whose markup names nothing: the comments are under a heading that counts
# them, the reply form under one that asks for a reply.
_PLAIN_COMMENT = """<div class="c{n}"><b>{author}</b> wrote on June {n}th, 2008:<br>{text}</div>"""
UNNAMED_COMMENTS_ARTICLE = f"""<!DOCTYPE html><html><head><title>How to bake sourdough bread</title></head><body>
<table width="100%"><tr><td width="160" valign="top"><a href="/">Home</a><br><a href="/archive">Archive</a></td>
<td valign="top"><h2>How to bake sourdough bread at home</h2>{_ARTICLE_BODY}
<h3>3 Comments</h3>
{_PLAIN_COMMENT.format(n=4, author="Marta", text="My starter took almost two weeks to get going in a cold kitchen, "
                       "so do not give up if yours is slow at first. The loaf came out beautifully once it did.")}
{_PLAIN_COMMENT.format(n=5, author="Tomasz", text="Could I use whole wheat flour for the levain instead of white flour, "
                       "or would that change the timing of the folds too much?")}
{_PLAIN_COMMENT.format(n=6, author="Lena", text="Thanks for the detailed steps: my first loaf had an open crumb and "
                       "a crackly crust, and the whole family asked for another one the next weekend.")}
<h3>Leave a Reply</h3>
<form action="/post-comment" method="post"><p>Your email address will not be published. Name and comment are required.</p>
<p><input type="text" name="author"> Name</p><p><textarea name="comment"></textarea></p></form>
</td></tr></table></body></html>"""

#: Sentences that must end up where the tests say.
ARTICLE_SENTENCE = "Mix the levain the night before you bake"
COMMENT_SENTENCE = "My starter took almost two weeks to get going"
FORM_SENTENCE = "Your email address will not be published"
FORUM_REPLY_SENTENCE = "Below the tree line a sturdy three season tent"
REVIEW_SENTENCE = "Heavy, even heat, and the lid fits tightly"
