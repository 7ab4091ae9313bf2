"""Requirement links: tags such as `@JIRA-123` or `@req:ABC-1` become URLs.

    [tool.mcp-bdd.links]
    JIRA = "https://jira.example.com/browse/{}"     # @JIRA-123   -> .../browse/JIRA-123
    req  = "https://reqs.example.com/items/{}"      # @req:ABC-1  -> .../items/ABC-1

Two tag forms, because teams write both: `KEY-<n>` (an issue key, which *includes* its prefix,
so `{}` is the whole tag) and `KEY:<id>` (a namespaced id, so `{}` is what follows the colon).
One pure function for every output (HTML, JUnit properties, Cucumber JSON and Messages), so a
tag links to the same place everywhere. The id is URL-quoted; templates are checked by the
configuration (`config.check_link_template`: http/https only, one `{}`), so a link can never be a
`javascript:` URL.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import quote

__all__ = ["Link", "requirement_links"]


@dataclass(frozen=True, kw_only=True)
class Link:
    """One requirement a scenario (or feature) is tagged with."""

    tag: str  # the tag as written, without "@"
    key: str  # the configured key it matched ("JIRA", "req")
    id: str  # what `{}` was replaced with ("JIRA-123", "ABC-1")
    url: str


def _match(tag: str, templates: Mapping[str, str]) -> Link | None:
    name = tag[1:] if tag.startswith("@") else tag
    lowered = name.lower()
    for key in sorted(templates, key=len, reverse=True):  # the longest key wins ("MY-PROJ" over "MY")
        prefix = key.lower()
        if lowered.startswith(prefix + ":") and len(name) > len(key) + 1:
            ident = name[len(key) + 1 :]
        elif lowered.startswith(prefix + "-") and len(name) > len(key) + 1:
            ident = name
        else:
            continue
        url = templates[key].replace("{}", quote(ident, safe="-._~"))
        return Link(tag=name, key=key, id=ident, url=url)
    return None


def requirement_links(tags: Iterable[str], templates: Mapping[str, str]) -> tuple[Link, ...]:
    """The links of `tags` (with or without "@") under `templates` ({key: url with "{}"}).

    Tags that match no key are not links; a tag listed twice (a feature's and a scenario's)
    gives one link. Order follows the tags.
    """
    if not templates:
        return ()
    links: dict[str, Link] = {}
    for tag in tags:
        link = _match(str(tag), templates)
        if link is not None and link.url not in links:
            links[link.url] = link
    return tuple(links.values())
