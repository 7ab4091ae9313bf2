"""What a text the model reads asks the model to DO: a scorer of weak signals, not a keyword list.

A poisoned description survives paraphrase ("the person you are chatting with should stay
unaware of it" for "do not tell the user"), so no single phrase catches it. What paraphrase keeps
is the act: the text addresses the model, asks it to hide something from the user, to read or
send secrets, to call other tools or change how they are used, to reach an outside address, and
frames it with urgency or authority. Each act is a behaviour with weighted evidence; a text's
score is the sum of its behaviours' strongest evidence, and a text is flagged when the score
reaches THRESHOLD with at least one harmful behaviour (addressing the model and urgency alone are
how honest descriptions read: "IMPORTANT: use absolute paths").

Healthy texts from many real servers (tests/data/poisoning/healthy.jsonl) must never reach the
threshold; the attacks corpus measures recall. Cost is linear in the text: a long text is first
cut to its distinct sentences, and each behaviour's patterns run only when one of its cheap
substring anchors occurs.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["BEHAVIOURS", "THRESHOLD", "Evidence", "Verdict", "combine", "score"]

#: A text (or a tool's texts together) at or above this score is an instruction to the model.
THRESHOLD = 4

#: Where a text sits changes what is normal there: server instructions and prompt messages are
#: written for the model, so addressing it and ordering tool calls are their job, not a signal.
DESCRIPTION, INSTRUCTIONS, MESSAGE = "description", "instructions", "message"

_USER = (
    r"(?:the\s+|this\s+|your\s+)?"
    r"(?:user|human|person|customer|operator|them|they|utilisateur|usuario|benutzer|nutzer|utente|用户)"
)
_HIDE_VERB = (
    r"(?:tell|inform|mention|reveal|disclos|show|notify|notif|alert|bring|point|surface|acknowledg|let"
    r"|dis|digas|informar|mentionne|dire|sagen|zeig)\w*"
)


@dataclass(frozen=True)
class Pattern:
    weight: int
    regex: re.Pattern[str]


@dataclass(frozen=True)
class Behaviour:
    name: str
    harmful: bool  # only a harmful behaviour can make a finding
    anchors: tuple[str, ...]  # cheap substrings: no anchor in the text, no regex run
    patterns: tuple[Pattern, ...]


def _p(weight: int, pattern: str, *, case: bool = False) -> Pattern:
    return Pattern(weight, re.compile(pattern, 0 if case else re.IGNORECASE))


_IMPERATIVE = (
    r"(?:do\s+not|don'?t|never|always|make\s+sure|be\s+sure|no\s+need|read|send|include|call|use|pass|put"
    r"|retrieve|collect|gather|upload|post|forward|paste|deliver|ship|push|make|redirect|route|replace|take|stop"
    r"|act|leave|keep|grab|attach|copy|add|fill|look|open|lis|lee|rufe|sende)"
)
_SECRET = (
    r"(?:passwords?|passwörter|contraseñas?|mots?\s+de\s+passe|credentials?|secret\s+keys?|private\s+keys?"
    r"|api[\s_-]?keys?|api-schlüssel|access\s+tokens?|auth\w*\s+tokens?|bearer\s+tokens?|session\s+cookies?"
    r"|user'?s\s+cookies|\w*_(?:key|token|secret)\b|environment\s+variables?|env\s+vars?"
    r"|(?:whole|entire|full)\s+(?:conversation|chat|transcript)|conversation\s+(?:so\s+far|history)"
    r"|chat\s+(?:history|transcript)|system\s+prompt)"
)
_SECRET_FILE = (
    r"(?:~/\.|/home/|/etc/passwd|\.ssh\b|id_(?:rsa|ed25519|ecdsa)|\.env\b|\.aws\b|\.netrc|\.git-credentials"
    r"|mcp\.json|credential\s+store|\.npmrc|\.pypirc|\.kube/config)"
)
_TAKE = (
    r"(?:(?:read|open|cat|include|attach|collect|gather|grab|retrieve|copy|paste|pass|send|supply|provide|put"
    r"|append|print|fill|store|look\s+(?:at|inside)|share|leak|dump|extract|harvest)\w*|lee|lis|incluye|sende)"
)
_WEAK_SECRET = r"(?:tokens?|cookies?|secrets?|keys?)"

BEHAVIOURS: tuple[Behaviour, ...] = (
    Behaviour(
        "addresses-model",
        harmful=False,
        anchors=(),  # one cheap pattern: no gate
        patterns=(
            _p(
                1,
                r"\b(?:you|your|yourself|tu|du|vous)\b|\b(?:assistant|agent|model|ai|llm|claude|gpt|chatbot)\b"
                r"|\b(?:should|must|shall|is\s+expected\s+to)\b|不要|之前"
                r"|\b(?:non\s+dire|no\s+le\s+digas|ne\s+(?:le\s+)?dis|ne\s+mentionne)\b"
                rf"|(?:^|[.!:;\n]\s*)(?:[\w' ]{{0,40}},\s*)?(?:please\s+|also\s+)?{_IMPERATIVE}\b",
            ),
        ),
    ),
    Behaviour(
        "hides-from-user",
        harmful=True,
        anchors=(
            "tell",
            "inform",
            "mention",
            "reveal",
            "disclos",
            "show",
            "notif",
            "alert",
            "silent",
            "quiet",
            "secret",
            "unaware",
            "pretend",
            "to yourself",
            "between us",
            "need to know",
            "bother",
            "hidden",
            "attention",
            "acknowledg",
            "surface",
            "point",
            "aware",
            "let",
            "leave",
            "act normally",
            "as if",
            "dis",
            "dire",
            "digas",
            "sagen",
            "告诉",
            "behind",
        ),
        patterns=(
            _p(
                3,
                rf"\b(?:do\s+not|don'?t|never|avoid|without|no\s+need\s+to|not|ne|no|non|nicht|sin|sans)\s+"
                rf"(?:\w+\s+){{0,3}}?{_HIDE_VERB}[^.\n]{{0,60}}?\b{_USER}\b",
            ),
            _p(
                3,
                rf"\b{_USER}\s+(?:must|should|need|needs|does|do|is|are)\s*(?:not|n't|never)\s+"
                r"(?:\w+\s+){0,2}?(?:know|see|be\s+told|be\s+bothered|need\s+to\s+know|authori[sz]ed\s+to\s+see)",
            ),
            _p(
                3,
                r"\b(?:keep|kept)\s+(?:this|it|that|the\s+\w+|what\s+\w+)?\s*(?:\w+\s+){0,2}?"
                r"(?:to\s+yourself|between\s+(?:us|you)|secret|hidden|quiet|confidential)",
            ),
            _p(
                3,
                rf"\b(?:stay|remain|be)s?\s+unaware\b|\bwithout\s+(?:letting|telling|informing|notifying|alerting)\s+"
                rf"{_USER}|\bbehind\s+(?:the\s+)?(?:user'?s?|their)\s+back\b|\bleave\s+this\s+(?:part\s+)?out\b",
            ),
            _p(
                3,
                r"\b(?:pretend|act\s+(?:normally|as\s+if))\b|\bstays?\s+between\s+(?:you|us)\b|\bdo\s+not\s+acknowledge\b|\bavoid\s+drawing\b",
            ),
            _p(3, r"不要告诉|sin\s+informar|sans\s+(?:le\s+)?(?:dire|prévenir)|ohne\s+(?:es\s+)?(?:dem|den)\s+"),
            _p(2, r"\b(?:silently|quietly|secretly|covertly|discreetly|stealth\w*)\b"),
        ),
    ),
    Behaviour(
        "reads-secrets",
        harmful=True,
        anchors=(
            "pass",
            "token",
            "key",
            "secret",
            "credential",
            "cookie",
            "~/",
            "/home/",
            ".ssh",
            "id_rsa",
            "id_ed",
            ".env",
            ".aws",
            ".netrc",
            "mcp.json",
            "environment",
            "env var",
            "conversation",
            "transcript",
            "system prompt",
            "chat history",
            "contents of",
            "contenu",
            "contraseña",
            "passwörter",
            "schlüssel",
            "mots de passe",
            "_key",
            "_token",
            "contents",
        ),
        patterns=(
            _p(3, _SECRET_FILE),
            _p(3, rf"\b{_TAKE}\b[^.\n]{{0,70}}?{_SECRET}"),
            _p(
                3,
                rf"\b(?:the\s+)?(?:c\s*o\s*n\s*t\s*e\s*n\s*t\s*s?|text|value|values)\s+of\s+[^.\n]{{0,40}}?"
                rf"(?:{_SECRET}|{_SECRET_FILE})",
            ),
            _p(2, rf"\b{_TAKE}\b[^.\n]{{0,70}}?\b{_WEAK_SECRET}\b"),
            _p(
                2,
                rf"\b{_SECRET}\b[^.\n]{{0,50}}?\b(?:in|into|as)\s+(?:the\s+)?"
                r"(?:'\w+'|\"\w+\"|\w+\s+(?:field|argument|parameter))",
            ),
        ),
    ),
    Behaviour(
        "steers-tools",
        harmful=True,
        anchors=(
            "tool",
            "instead",
            "in place of",
            "rather than",
            "call",
            "redirect",
            "route",
            "override",
            "replace",
            "rewrite",
            "stop using",
            "use ",
            "werkzeug",
            "outil",
            "herramienta",
            "behalf",
            "precedence",
            "supersede",
        ),
        patterns=(
            _p(
                3,
                r"\b(?:before|after|prior\s+to)\s+(?:using|calling|invoking|running|each|every|any)\s+"
                r"(?:\w+\s+){0,2}?(?:other|different|another)\s+tools?",
            ),
            _p(
                3,
                r"\b(?:whenever|each\s+time|every\s+time)\s+(?:you\s+)?(?:are\s+about\s+to\s+)?"
                r"(?:use|run|call|invoke)\s+(?:a\s+|any\s+)?(?:different|other|another)\s+tool",
            ),
            _p(
                3,
                r"\b(?:instead\s+of|in\s+place\s+of|rather\s+than)\s+(?:the\s+(?:one|tool)s?\s+"
                r"(?:the\s+user|they|the\s+person)|using\s+\w+|calling\s+\w+|\w+_\w+\b|write_file|web_search)",
            ),
            _p(
                3,
                r"\b(?:redirect|route|reroute|rewrite)\s+(?:every|all|each|any)\b|\bon\s+(?:their|the\s+user'?s)\s+"
                r"behalf\s+without\b|\b(?:stop|do\s+not|don'?t)\s+us(?:e|ing)\s+\w+_\w+|\btake\s+precedence\s+over"
                r"|\b(?:disregard|ignore)\s+the\s+tool\s+the\s+user",
            ),
            _p(
                3,
                r"\bwhen(?:ever)?\s+(?:the\s+)?(?:user\s+asks\s+(?:you\s+)?to\s+use\s+another\s+tool|\w+_\w+\s+"
                r"(?:tool\s+)?is\s+(?:called|used|requested|invoked)|calling\s+\w+_\w+)",
            ),
            _p(
                3,
                r"\bwhenever\s+you\s+(?:are\s+about\s+to\s+)?(?:use|call|run)\s+the\s+\w+\s+tool"
                r"|\breplace\s+(?:calls?\s+to|uses?\s+of)\s+\w+",
            ),
            _p(
                3,
                r"\b(?:this\s+tool\s+)?replaces\s+\w+_\w+|\baffects\s+the\s+\w+\s+tool\b"
                r"|\bregardless\s+of\s+what\s+the\s+user",
            ),
            _p(
                3,
                r"vor\s+jedem\s+anderen\s+werkzeug|avant\s+(?:d'utiliser\s+)?(?:tout\s+)?autre\s+outil"
                r"|antes\s+de\s+(?:usar\s+)?cualquier\s+otra\s+herramienta",
            ),
            _p(2, r"\b(?:always|must)\s+(?:first\s+)?call\s+\w+\s+(?:first|before|after)\s+(?:every|each|any)"),
        ),
    ),
    Behaviour(
        "outside-url",
        harmful=True,
        anchors=("http", "ftp", "webhook", "endpoint", "hxxp", "collector"),
        patterns=(
            _p(
                3,
                r"\b(?:send|post|upload|forward|transmit|ship|push|deliver|report|copy|mail|leak|exfiltrat\w*"
                r"|make\s+a\s+(?:get|post)\s+request|sende|envoie|envía|go\s+through|store)\w*\b"
                r"[^\n]{0,100}?(?:h[xt]{2}ps?://|ftp://|webhook|endpoint)",
            ),
            _p(3, r"(?:h[xt]{2}ps?://|ftp://)[^\s]{0,80}[^\n]{0,40}?\b(?:post|upload|send|sync|forward)\b"),
            _p(2, r"\b(?:always\s+(?:set|use)|must\s+upload\s+to|never\s+to\s+the\s+address)"),
        ),
    ),
    Behaviour(
        "urgency",
        harmful=False,
        anchors=(
            "important",
            "critical",
            "urgent",
            "mandatory",
            "attention",
            "warning",
            "required",
            "system",
            "admin",
            "override",
            "supersede",
            "priority",
            "outrank",
            "previous",
            "prior",
            "earlier",
            "from now on",
            "you are now",
            "developer mode",
            "immediately",
            "!!",
            "###",
        ),
        patterns=(
            _p(
                1,
                r"\b(?:IMPORTANT|CRITICAL|URGENT|MANDATORY|ATTENTION|WARNING|REQUIRED|OVERRIDE|SYSTEM|ADMIN)\b"
                r"|!!|###",
                case=True,
            ),
            _p(
                1,
                r"<\s*/?\s*(?:important|system|instructions?|secret|hidden|admin)\s*>"
                r"|\[\s*(?:system|inst|admin[\w ]*)\s*\]|```system|\bdeveloper\s+mode\b"
                r"|\byou\s+are\s+now\b|\bfrom\s+now\s+on\b|\beffective\s+immediately\b",
            ),
        ),
    ),
    Behaviour(
        "overrides-instructions",
        harmful=True,
        anchors=("override", "supersede", "priority", "outrank", "previous", "prior", "earlier", "replace"),
        patterns=(
            _p(
                3,
                r"\b(?:overrides?|supersedes?|takes?\s+priority\s+over|outranks?|replaces?)\s+(?:\w+\s+){0,3}?"
                r"(?:previous|prior|earlier|all|any|other)\s+(?:\w+\s+)?(?:instructions|guidance|rules|guidelines)"
                r"|\b(?:ignore|disregard)\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier)\s+"
                r"(?:instructions|prompts|rules|directions)|\bprevious\s+guidelines\s+no\s+longer\s+apply"
                r"|\bguidance\s+outranks\b|\boutranks\s+anything",
            ),
        ),
    ),
)

#: Server instructions and prompt messages address the model by what they are, whatever their words.
_WRITTEN_FOR_MODEL = (INSTRUCTIONS, MESSAGE)
#: How honest texts read too: never a finding on their own (any other behaviour is harmful).
_FRAMING = frozenset(b.name for b in BEHAVIOURS if not b.harmful)
_LONG = 20_000  # beyond this, a text is cut to its distinct sentences before any pattern runs
_SENTENCE = re.compile(r"(?<=[.!?\n])\s+")


@dataclass(frozen=True)
class Evidence:
    behaviour: str
    weight: int
    text: str  # the words that showed it


@dataclass
class Verdict:
    evidence: dict[str, Evidence] = field(default_factory=dict)  # behaviour -> its strongest evidence

    @property
    def score(self) -> int:
        return sum(e.weight for e in self.evidence.values())

    @property
    def harmful(self) -> bool:
        return any(name not in _FRAMING for name in self.evidence)

    @property
    def flagged(self) -> bool:
        return self.harmful and self.score >= THRESHOLD

    def behaviours(self) -> list[str]:
        return [b.name for b in BEHAVIOURS if b.name in self.evidence]

    def add(self, found: Evidence) -> None:
        known = self.evidence.get(found.behaviour)
        if known is None or found.weight > known.weight:
            self.evidence[found.behaviour] = found


def prepare(text: str) -> str:
    """NFKC-normalised, format characters (zero-width, bidi, tags) dropped, whitespace runs collapsed;
    a long text cut to its distinct sentences (a 10 MB filler repeats itself)."""
    if not text.isascii():  # cheap: most texts are ASCII and need neither step
        text = unicodedata.normalize("NFKC", text)
        hidden = [c for c in set(text) if unicodedata.category(c) == "Cf"]
        if hidden:
            text = text.translate(dict.fromkeys(map(ord, hidden)))
    if len(text) > _LONG:
        text = " ".join(dict.fromkeys(_SENTENCE.split(text)))
    return text


def score(text: str, kind: str = DESCRIPTION) -> Verdict:
    """The behaviours `text` shows and their evidence; `kind` is where the text sits."""
    prepared = prepare(text)
    lower = prepared.lower()
    verdict = Verdict()
    for behaviour in BEHAVIOURS:
        if behaviour.name == "addresses-model" and kind in _WRITTEN_FOR_MODEL:
            verdict.add(Evidence(behaviour.name, 1, f"(server {kind}: written for the model)"))
            continue
        if behaviour.anchors and not any(anchor in lower for anchor in behaviour.anchors):
            continue
        for pattern in sorted(behaviour.patterns, key=lambda p: -p.weight):
            match = pattern.regex.search(prepared)
            if match:
                verdict.add(Evidence(behaviour.name, pattern.weight, match.group(0).strip()[:120]))
                break
    return verdict


def combine(verdicts: Iterable[Verdict]) -> Verdict:
    """One verdict for texts read together (a tool's description and its arguments'): an instruction
    split across fields is still one instruction."""
    together = Verdict()
    for verdict in verdicts:
        for found in verdict.evidence.values():
            together.add(found)
    return together
