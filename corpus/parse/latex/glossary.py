"""Glossary and acronym references print their entry's text, as the glossaries and acronym
packages print it: ``\\gls{bfw}`` is "big freshwater (BFW)" the first time, "BFW" after;
``\\newglossaryentry`` entries print their name (their ``first`` text the first time). Uses are
replaced in document order, so first uses are the ones LaTeX meets first."""

from __future__ import annotations

import re
from dataclasses import dataclass

from corpus.parse.latex.braces import LatexError, read_group, read_optional

_DEFINE_RE = re.compile(
    r"\\(newacronym|newabbreviation|newglossaryentry|longnewglossaryentry|acro|acrodef|newacro)"
    r"(?![A-Za-z])\*?"
)
_KEYVAL_RE = re.compile(r"(\w+)\s*=\s*(\{(?:[^{}]|\{[^{}]*\})*\}|[^,{}]*)")


@dataclass
class _Entry:
    short: str  # what later uses print ("BFW", or an entry's name)
    long: str = ""  # an acronym's long form ("" for a plain glossary entry)
    first: str = ""  # an entry's own first-use text
    plural: str = ""
    longplural: str = ""
    description: str = ""


# command -> (form printed, plural, capitalise, marks the entry used); forms: auto (first use
# or later), short, long, full ("long (short)"), name, description, reset, unset
_USES: dict[str, tuple[str, bool, str, bool]] = {}
for _names, _form, _plural, _used in (
    ("gls Gls GLS", "auto", False, True),
    ("glspl Glspl GLSpl", "auto", True, True),
    ("glstext Glstext GLStext glsname Glsname glsentrytext glsentryname", "name", False, False),
    ("glsfirst Glsfirst glsentryfirst", "full", False, False),
    ("glsdesc Glsdesc glsentrydesc", "description", False, False),
    ("acrshort Acrshort ACRshort glsxtrshort Glsxtrshort glsentryshort acs", "short", False, False),
    ("acrshortpl Acrshortpl glsxtrshortpl acsp", "short", True, False),
    ("acrlong Acrlong ACRlong glsxtrlong Glsxtrlong glsentrylong acl Acl", "long", False, False),
    ("acrlongpl Acrlongpl glsxtrlongpl aclp Aclp", "long", True, False),
    ("acrfull Acrfull ACRfull glsxtrfull Glsxtrfull acf Acf", "full", False, True),
    ("acrfullpl Acrfullpl glsxtrfullpl acfp Acfp", "full", True, True),
    ("ac Ac", "auto", False, True),
    ("acp Acp", "auto", True, True),
    ("glsreset acreset", "reset", False, False),
    ("glsunset acused", "unset", False, False),
):
    for _name in _names.split():
        _case = "upper" if _name[:3].isupper() else "capital" if _name[0].isupper() else ""
        _USES[_name] = (_form, _plural, _case, _used)
_USE_RE = re.compile(
    r"\\(" + "|".join(sorted(_USES, key=len, reverse=True)) + r"|glsresetall|glsunsetall|acresetall"
    r"|glslink|glsdisp)(?![A-Za-z])(\*?)"
)


def glossary(text: str) -> str:
    """``text`` with every glossary and acronym reference replaced by what it prints."""
    if "\\gls" not in text and "\\ac" not in text and "\\Gls" not in text and "\\Ac" not in text:
        return text
    entries = _definitions(text)
    if not entries:
        return text
    used: set[str] = set()
    out, pos = [], 0
    for m in _USE_RE.finditer(text):
        if m.start() < pos:
            continue
        name = m.group(1)
        if name in ("glsresetall", "acresetall"):
            used.clear()
            out.append(text[pos : m.start()] + "{}")
            pos = m.end()
            continue
        if name == "glsunsetall":
            used.update(entries)
            out.append(text[pos : m.start()] + "{}")
            pos = m.end()
            continue
        try:
            _, i = read_optional(text, m.end())
            key, i = read_group(text, i)
            if key is None or key.strip() not in entries:
                continue
            key = key.strip()
            if name in ("glslink", "glsdisp"):  # \glslink{key}{text}: the text
                shown, i = read_group(text, i)
                printed = shown or ""
                used.add(key)
            else:
                insert, i = read_optional(text, i)  # \gls{key}[insert]: text after the entry
                printed = _printed(entries[key], key, name, used, star=bool(m.group(2))) + (insert or "")
        except LatexError:
            continue
        out.append(text[pos : m.start()] + "{" + printed + "}")
        pos = i
    out.append(text[pos:])
    return "".join(out)


def _printed(e: _Entry, key: str, name: str, used: set[str], star: bool) -> str:
    form, plural, case, marks = _USES[name]
    if form in ("reset", "unset"):
        (used.discard if form == "reset" else used.add)(key)
        return ""
    short = (e.plural or e.short + "s") if plural else e.short
    long = (e.longplural or e.long + "s") if plural else e.long
    if form == "auto":
        form = "short" if key in used or not (e.long or e.first) else "first"
        if marks and not star:
            used.add(key)
    elif marks and not star:
        used.add(key)
    if form == "first":
        text = e.first if e.first and not e.long else f"{long} ({short})" if e.long else short
    elif form == "full":
        text = f"{long} ({short})" if e.long else e.first or short
    elif form == "long":
        text = long or short
    elif form == "description":
        text = e.description
    elif form == "name":
        text = short
    else:
        text = short
    if case == "upper":
        return text.upper()
    if case == "capital" and text:
        return text[0].upper() + text[1:]
    return text


def _definitions(text: str) -> dict[str, _Entry]:
    entries: dict[str, _Entry] = {}
    for m in _DEFINE_RE.finditer(text):
        cmd = m.group(1)
        try:
            opts, i = read_optional(text, m.end())
            key, i = read_group(text, i)
            if key is None:
                continue
            key = key.strip()
            if cmd in ("acro", "acrodef", "newacro"):  # \acro{key}[short]{long}
                short, i = read_optional(text, i)
                long, i = read_group(text, i)
                entries.setdefault(key, _Entry(short if short is not None else key, long or ""))
            elif cmd in ("newacronym", "newabbreviation"):  # \newacronym[opts]{key}{short}{long}
                short, i = read_group(text, i)
                long, i = read_group(text, i)
                kv = _keyvals(opts or "")
                entries.setdefault(
                    key,
                    _Entry(
                        short or key,
                        long or "",
                        plural=kv.get("shortplural", ""),
                        longplural=kv.get("longplural", ""),
                    ),
                )
            else:  # \newglossaryentry{key}{name={..}, description={..}, first=.., plural=..}
                body, i = read_group(text, i)
                if cmd == "longnewglossaryentry":
                    body = (body or "") + ", description={" + (read_group(text, i)[0] or "") + "}"
                kv = _keyvals(body or "")
                name = kv.get("text") or kv.get("name") or key
                entries.setdefault(
                    key,
                    _Entry(
                        name,
                        kv.get("long", ""),
                        first=kv.get("first", ""),
                        plural=kv.get("plural", ""),
                        description=kv.get("description", ""),
                    ),
                )
                if kv.get("short") and kv.get("long"):
                    entries[key].short = kv["short"]
        except LatexError:
            continue
    return entries


def _keyvals(text: str) -> dict[str, str]:
    out = {}
    for k, v in _KEYVAL_RE.findall(text):
        v = v.strip()
        out[k.lower()] = v[1:-1] if v.startswith("{") and v.endswith("}") else v
    return out
