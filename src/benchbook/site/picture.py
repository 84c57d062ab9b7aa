"""Sphinx extension: each glued figure as a `<picture>`, a phone's layout below PHONE_MEDIA.

`report.glue_figure` glues the desktop PNG as the output's image and the same figure laid
out for a phone in the output's metadata (`benchbook.figure`). `PictureRenderer`, a myst-nb
mime renderer (entry point `myst_nb.mime_renderers`, pyproject.toml), writes the phone PNG
beside the desktop one and wraps both in a `picture` node; the HTML writer below makes it
`<picture><source media=... srcset=phone.png><img src=desktop.png></picture>`, so a browser
fetches one of the two: no script, and the same page from disk, in print (the desktop one)
and in dark mode. Each image carries its natural size and its smallest text in pixels
(`data-font-px`), from which a test works out the text size a reader sees.
"""

from __future__ import annotations

import hashlib
import posixpath
import urllib.parse
from base64 import b64decode
from html import escape

from docutils import nodes

from .. import __version__

# Below this window width the desktop figure's smallest text would show under 9 px (the
# article column is the window less 48 px there, and plots.MAX_WIDTH_IN is sized for a
# 608 px column); the phone layout (page.phone) keeps it at about 10 px down to 360 px.
PHONE_MEDIA = "(max-width: 656px)"


class picture(nodes.General, nodes.Element):
    """A figure's image (the desktop one, its child) with a phone's rendering."""


class phone_image(nodes.image):
    """The phone rendering: an image, so Sphinx copies it to _images, written as a <source>."""


class PictureRenderer:
    """myst-nb mime renderer for a glued figure with a phone layout; any other output is
    left to myst-nb (None), and so is every output when this extension is not loaded."""

    mime_priority_overrides = ()

    @staticmethod
    def handle_mime(renderer, data, inline: bool):
        meta = (data.output_metadata or {}).get("benchbook", {}).get("figure")
        if inline or data.mime_type != "image/png" or not meta or not _loaded(renderer):
            return None
        images = renderer.render_image(data)
        phone = meta["phone"]
        raw = b64decode(phone["png"])
        uri = renderer.write_file([hashlib.sha256(raw).hexdigest() + ".png"], raw, overwrite=False, exists_ok=True)
        images[0]["benchbook_size"] = {k: meta[k] for k in ("width", "height", "font_px")}
        source = phone_image(uri=uri, benchbook_size={k: phone[k] for k in ("width", "height", "font_px")})
        return [picture("", images[0], source)]


def _loaded(renderer) -> bool:
    env = getattr(renderer.renderer, "sphinx_env", None)
    return env is not None and __name__ in env.app.extensions and env.app.builder.format == "html"


def _attrs(size: dict) -> str:
    return (f' width="{int(size["width"])}" height="{int(size["height"])}"'
            f' data-font-px="{float(size["font_px"]):g}"')


def visit_picture(self, node: picture) -> None:
    """<a><picture><source><img></picture></a>: the link Sphinx puts around a scaled image
    (to its full size) goes around the picture, whose only children are sources and one img."""
    image = next(n for n in node.findall(nodes.image) if not isinstance(n, phone_image))
    source = next(node.findall(phone_image))
    link = image.parent if isinstance(image.parent, nodes.reference) else None
    if link is not None:
        self.body.append(f'<a class="reference internal image-reference" href="{escape(link["refuri"])}">')
    srcset = source["uri"]
    if srcset in self.builder.images:
        srcset = posixpath.join(self.builder.imgpath, urllib.parse.quote(self.builder.images[srcset]))
    self.body.append(f'<picture><source media="{PHONE_MEDIA}" srcset="{escape(srcset)}"'
                     f'{_attrs(source["benchbook_size"])}>')
    size = image.get("benchbook_size")
    start = len(self.body)
    image.walkabout(self)
    for i in range(start, len(self.body)) if size else ():  # the img's natural size and smallest text
        if "<img " in self.body[i]:
            self.body[i] = self.body[i].replace("<img ", "<img" + _attrs(size) + " ", 1)
            break
    self.body.append("</picture>" + ("</a>" if link is not None else ""))
    raise nodes.SkipNode


def _skip(self, node) -> None:
    raise nodes.SkipNode


def setup(app):
    other = {b: (_skip, None) for b in ("latex", "text", "man", "texinfo")}
    app.add_node(picture, html=(visit_picture, None), **other)
    app.add_node(phone_image, html=(_skip, None), **other)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
