"""What each command's arguments are, text or not, in one table: ``\\textcolor{black}{Feature}``
prints "Feature", ``\\setlength\\tabcolsep{6pt}`` nothing, ``\\hyperref[sec:a]{Section A}``
"Section A". :func:`strip_arguments` rewrites LaTeX by it: arguments that are no text
(lengths, counters, colours, labels, file names, options) go, text arguments stay in braces.

A spec is read left to right, one letter an argument (xparse's letters where they exist):

* ``s`` an optional star, ``o`` an optional ``[...]`` (no text), ``O`` one that is text,
  ``d`` an optional ``(...)`` (no text: the knowledge package's scopes), ``=`` an optional ``=``;
* ``m`` a mandatory argument that is no text, ``t`` one that is text (a group or one token);
* ``g`` a further group, read only when one follows (``\\collaboration{n}{name}`` in AASTeX,
  ``\\collaboration{name}`` in REVTeX);
* ``l`` a TeX length or glue (``0.5cm``, ``-2pt``, ``6pt plus 1fil``, ``2\\baselineskip``);
* ``y`` a tikz path: a group, or everything up to the ``;`` that ends it;
* a final ``_``: the command leaves a space (``\\hspace``, ``\\hskip``).

Environments are in the same table under ``{name}``: their arguments after ``\\begin{name}``.
The one-argument wrappers that print their argument (``\\emph``, ``\\textbf``, ``\\mbox``) and
the switches that take none (``\\bfseries``, ``\\centering``) are not repeated here: the fast
path of :mod:`corpus.parse.latex.text` removes their names (no name is in both).
"""

from __future__ import annotations

import re

from corpus.parse.latex.braces import LatexError, control_words, read_arg, read_group, read_optional, skip_ws


def _table(spec_names: str) -> dict[str, str]:
    """``"om: a b c; m: d"`` -> {a: om, b: om, c: om, d: m} (one spec, many names)."""
    out: dict[str, str] = {}
    for part in spec_names.split(";"):
        if part.strip():
            spec, _, names = part.partition(":")
            spec = spec.strip().replace("-", "")  # "-": no argument at all
            for name in names.split():
                out[name] = spec
    return out


ARGUMENTS: dict[str, str] = _table(
    # front matter: names, affiliations, dates, running heads, journal metadata
    """om: author affil address email title ead cortext fntext tnotetext subjclass ccsdesc
    thanks marginpar todo caption captionsetup addbibresource usepackage RequirePackage;
    m: label zlabel date institute orcid orcidlink markright subtitle shorttitle runningtitle titlerunning
    authorrunning dedicatory preprint received revised accepted published altaffiliation homepage
    submitjournal shortauthors institution streetaddress city state country
    postcode additionalaffiliation authornote titlenote inst IEEEauthorblockN IEEEauthorblockA
    IEEEmembership acmBooktitle acmDOI acmISBN acmPrice acmYear acmJournal acmVolume acmNumber
    acmArticle acmMonth copyrightyear setcopyright altaffilmark Received Accepted KeyWords keyword
    keywords pacs tnoteref fnref abstract runtitle runauthor thanksref pubyear pagerange volume issue
    firstpage lastpage pubvolume issuenum articlenumber datereceived daterevised dateaccepted
    datepublished hreflink externaleditor dochead leadauthor significancestatement authorcontributions
    authordeclaration equalauthors dates; om: printead; mm: thankstext;
    mg: collaboration correspondingauthor; omg: affiliation; mm: markboth altaffiltext SetRunningHead;
    omgg: acmConference; m: authors journalname submitto;
    o: footnotemark authornotemark printbibliography linebreak pagebreak nopagebreak allowdisplaybreaks
    twocolumn;
    -: nocollaboration phantomsection IEEEoverridecommandlockouts;"""
    # bibliography, index, files, links (xr and zref-xr: labels of another document)
    """m: bibliographystyle bibliography index glossary graphicspath hyphenation input include
    includeonly; om: externaldocument zexternaldocument;
    som: includegraphics; om: includepdf includesvg lstinputlisting;
    mt: hypertarget hyperlink; ot: hyperref; omt: href; m: hypersetup; omm: pdfbookmark; mm:
    belowpdfbookmark currentpdfbookmark subpdfbookmark; om: bookmark;"""
    # lengths, spacing and boxes
    """sm: vspace; sm_: hspace; m: addvspace linespread setstretch; sm: enlargethispage;
    mm: setlength addtolength settowidth settoheight settodepth; m: newlength;
    l: vskip kern mkern mskip vglue lower raise moveleft moveright parindent parskip baselineskip
    tabcolsep arraycolsep columnsep textwidth textheight linewidth columnwidth abovecaptionskip
    belowcaptionskip topmargin oddsidemargin evensidemargin headheight headsep footskip itemsep parsep
    topsep labelsep leftmargin rightmargin arrayrulewidth fboxsep fboxrule unitlength jot
    abovedisplayskip belowdisplayskip intextsep textfloatsep floatsep dbltextfloatsep;
    l_: hskip hglue;
    omm: rule; m: phantom hphantom vphantom; ot: smash; moot: raisebox; smmt: resizebox; mot: scalebox;
    omt: rotatebox; t: reflectbox; ooomt: parbox; oot: makebox framebox;
    m: geometry newgeometry; -: restoregeometry;"""
    # counters and theorems
    """mm: setcounter addtocounter; m: stepcounter refstepcounter theoremstyle; mo: newcounter;
    omm: numberwithin; smm: counterwithin counterwithout; smomo: newtheorem; om: declaretheorem
    declaretheoremstyle; mmmmmmmmm: newtheoremstyle;"""
    # fonts, colours, languages, page styles
    """m: fontfamily fontseries fontshape fontencoding pagestyle thispagestyle pagenumbering
    selectlanguage; mm: fontsize addtocontents; mmmm: usefont; mmm: addcontentsline;
    ommm: definecolor; om: color pagecolor rowcolor cellcolor arrayrulecolor; omm: colorlet;
    omoo: columncolor; omt: textcolor colorbox foreignlanguage; ommt: fcolorbox;"""
    # page headers and footers (fancyhdr), heading formats (titlesec, sectsty), micro-typography
    # (microtype), caption formats: what they set is printed on every page or heading, never here
    """om: fancyhead fancyfoot fancyhf lhead chead rhead lfoot cfoot rfoot fancyheadoffset
    fancyfootoffset fancyhfoffset; mm: fancyplain; om: ihead ohead ifoot ofoot lehead cehead rehead lohead
    cohead rohead lefoot cefoot refoot lofoot cofoot rofoot; som: automark; -: manualmark;
    m: titlelabel sectionfont subsectionfont subsubsectionfont paragraphfont subparagraphfont
    chapterfont partfont allsectionsfont; mmo: titleclass;
    m: microtypesetup microtypecontext; om: DisableLigatures; omm: SetTracking SetExtraKerning
    SetProtrusion SetExpansion; mm: DeclareCaptionFont DeclareCaptionFormat DeclareCaptionLabelFormat
    DeclareCaptionTextFormat DeclareCaptionJustification; smm: DeclareCaptionLabelSeparator;
    smom: captionof;"""
    # definitions: what they define prints where it is used, never where it is defined
    # (environments and column types are the front end's: corpus.parse.latex.definitions)
    """mm: fancypagestyle; smommmmo: titleformat;
    smmmmo: titlespacing; momommmo: titlecontents;"""
    # package settings, tikz and pgfplots
    """m: setcitestyle sisetup lstset tikzset usetikzlibrary pgfplotsset usepgfplotslibrary
    tikzsetnextfilename; mm: pgfmathsetmacro; o: tikzexternalize; m=o: tikzstyle; oy: tikz;
    mmm: crefname Crefname; mm: creflabelformat crefalias crefformat Crefformat crefrangeformat
    Crefrangeformat crefrangelabelformat; mmmmm: crefmultiformat Crefmultiformat crefrangemultiformat
    Crefrangemultiformat; m: crefdefaultlabelformat;
    om: printglossary printacronyms newglossary loadglsentries; -: makeglossaries printglossaries
    glsaddall; om: glsadd; omm: newacronym newabbreviation; mm: newglossaryentry; m: acused acreset;
    mom: acro acrodef;"""
    # the knowledge package: \\kl(scope)[notion]{text} prints its text, definitions nothing
    """dot: kl intro reintro; dom: phantomintro; mog: knowledge; m: knowledgeconfigure;
    smm: knowledgestyle; smom: knowledgedirective; sm: knowledgedefault; mm: knowledgenewvariant; -: AP;"""
    # algorithmicx's definitions of blocks and commands
    """mm: algblock; sm: algtext; omm: algblockdefx;"""
    # text arguments set side by side
    """tt: IEEEPARstart; ott: lettrine; t: dropcap textsuperscript textsubscript centerline;
    mmt: multicolumn; omomot: multirow;"""
    # environments: their arguments after \begin{name}
    """ooom: {minipage}; moo: {multicols}; m: {multicols*} {otherlanguage} {otherlanguage*}
    {adjustbox} {spacing} {lrbox}; o: {tcolorbox} {mdframed} {enumerate} {itemize} {description};
    mm: {list}; om: {subfigure} {subtable}; OO: {displayquote}; o: {acronym};
    om: {addmargin} {addmargin*}; mm: {adjustwidth} {adjustwidth*};"""
)

_COMMAND_RE = re.compile(
    r"\\(" + control_words({k for k in ARGUMENTS if not k.startswith("{")}) + r")(?![A-Za-z])\*?"
)
_GLUE_RE = re.compile(
    r"\s*=?\s*[-+]?\s*(?:\d+\.?\d*|\.\d+)?\s*(?:(?:true\s*)?(?:pt|cm|mm|in|em|ex|bp|pc|dd|cc|sp|mu|px)\b|\\[A-Za-z]+)"
    r"(?:\s*(?:plus|minus)\s*[-+]?\s*(?:\d+\.?\d*|\.\d+)?\s*(?:fil+|pt|cm|mm|in|em|ex|bp|pc|dd|cc|sp|mu|\\[A-Za-z]+))*"
)


def read_arguments(s: str, i: int, spec: str) -> tuple[list[str | None], int]:
    """The arguments of ``spec`` read from ``s[i:]``: each text argument's LaTeX, ``None`` for
    one that is no text; and where they end. Raises :class:`LatexError` on an unclosed group."""
    texts: list[str | None] = []
    for kind in spec:
        if kind == "s":
            j = skip_ws(s, i)
            if s.startswith("*", j):
                i = j + 1
        elif kind in "oO":
            opt, i = read_optional(s, i)
            if kind == "O" and opt is not None:
                texts.append(opt)
        elif kind == "d":
            j = skip_ws(s, i)
            close = s.find(")", j, j + 200) if s.startswith("(", j) else -1
            if close > 0 and "\n\n" not in s[j:close]:
                i = close + 1
        elif kind == "=":
            j = skip_ws(s, i)
            if s.startswith("=", j):
                i = j + 1
        elif kind in "mt":
            arg, i = read_arg(s, i)
            texts.append(arg if kind == "t" else None)
        elif kind == "g":
            j = skip_ws(s, i)
            if j < len(s) and s[j] == "{" and "\n\n" not in s[i:j]:
                _, i = read_group(s, i)
        elif kind == "l":
            m = _GLUE_RE.match(s, i)
            if m:
                i = m.end()
        elif kind == "y":
            group, j = read_group(s, i)
            if group is not None:
                i = j
            else:  # a path: up to its ";" (near, and within the paragraph)
                end = s.find(";", i, i + 4000)
                if end >= 0 and "\n\n" not in s[i:end]:
                    i = end + 1
    return texts, i


def strip_arguments(latex: str) -> str:
    """``latex`` with every command of :data:`ARGUMENTS` replaced by its text arguments, each
    in braces (nested commands too); a command with none leaves an empty group (or a space),
    so the letters after it never join a control word before it. An assignment of a length to
    a length register (``\\abovedisplayskip=3pt``) goes too, whatever the register."""
    if "\\" not in latex:
        return latex
    latex = _ASSIGNMENT_RE.sub(" ", latex)
    return _rewrite(latex, _COMMAND_RE)


# What an argument holds when it is a setting, whatever the command (one the tables do not know):
# a length, a key=value list, an xcolor expression or a colour model's numbers. Such an argument
# is never text ("\\mysetup{protrusion=false}", "\\myskip{-0.5em}", "\\hl{red!30}").
_LENGTH = (
    r"[-+]?\s*(?:(?:\d+\.?\d*|\.\d+)\s*(?:true\s*)?(?:pt|cm|mm|in|em|ex|bp|pc|dd|cc|sp|mu|px)(?![A-Za-z])"
    r"|(?:\d+\.?\d*|\.\d+)?\s*\\[A-Za-z@]*(?:width|height|depth|skip|sep|size|indent|margin|length)(?![A-Za-z]))"
    r"(?:\s*(?:plus|minus)\s*[-+]?\s*(?:\d+\.?\d*|\.\d+)?\s*(?:fil+|pt|cm|mm|in|em|ex|mu))*"
)
# key=value items: keys are words set against their "=", values plain (code such as
# \code{n = 10} or \code{by = c("model")} is text)
_KEY_VALUE = r"[A-Za-z](?:[A-Za-z -]*[A-Za-z])?=(?:[^,{}\"'()$=\\]|\\[A-Za-z]+)*"
_SETTING = (
    rf"\s*(?:{_LENGTH}|{_KEY_VALUE}(?:\s*,\s*(?:{_KEY_VALUE}|[A-Za-z][A-Za-z -]*))*"
    r"|[A-Za-z]+(?:!\d+(?:![A-Za-z]+)?)+|\d*\.?\d+(?:\s*,\s*\d*\.?\d+){2,3}|[0-9A-Fa-f]{6})\s*"
)
_SETTING_ARGUMENT_RE = re.compile(r"\{" + _SETTING + r"\}|\[" + _SETTING + r"\]")
_SETTING_GROUP_RE = re.compile(r"\s*\{" + _SETTING + r"\}")
_ASSIGNMENT_RE = re.compile(  # a length register's name (not a symbol's: $\\alpha=2cm$ is text)
    r"\\[A-Za-z@]*(?:skip|sep|width|height|depth|indent|margin|size|space|length|offset)\s*=\s*"
    + _LENGTH
    # and TeX's integer parameters of line breaking (\hangafter=1, \looseness-1, \clubpenalty=10000)
    + r"|\\(?:[A-Za-z@]*(?:penalty|demerits|badness)|hangafter|tolerance|pretolerance|looseness)"
    r"(?![A-Za-z@])\s*=?\s*-?\d+"
)


def drop_settings(command: str) -> str:
    """An unknown command with its arguments (``\\foo[width=2cm]{4pt}``) without those that
    hold a setting (:data:`_SETTING_ARGUMENT_RE`): what is left may be text."""
    return _SETTING_ARGUMENT_RE.sub("", command) if "{" in command or "[" in command else command


# Commands whose arguments are LaTeX that sets up what prints elsewhere (a page style's headers,
# a heading's format): they go from the whole body before its structure is read, so a
# ``\section`` inside them is no heading (``\titlespacing*{\section}{0pt}{4pt}{4pt}`` made every
# section number one too high). The paper's environments and macros are the front end's.
DEFINITIONS = frozenset("fancypagestyle titleformat titlespacing titlecontents".split())
_DEFINITION_RE = re.compile(r"\\(" + control_words(DEFINITIONS) + r")(?![A-Za-z])\*?")


def drop_definitions(latex: str) -> str:
    """``latex`` without the commands of :data:`DEFINITIONS`."""
    return _rewrite(latex, _DEFINITION_RE) if "\\" in latex and _DEFINITION_RE.search(latex) else latex


def _rewrite(latex: str, command_re: re.Pattern) -> str:
    out: list[str] = []
    pos = 0
    for m in command_re.finditer(latex):
        if m.start() < pos:
            continue
        spec = ARGUMENTS[m.group(1)]
        try:
            texts, end = read_arguments(latex, m.end(), spec)
        except LatexError:
            continue
        out.append(latex[pos : m.start()])
        kept = [strip_arguments(t) for t in texts if t is not None]
        out.append("{" + "".join(kept) + "}" if kept else " " if spec.endswith("_") else "{}")
        pos = end
    if not out:
        return latex
    out.append(latex[pos:])
    return "".join(out)


# The knowledge package's quotation notation, on when the paper asks for it: "word" is
# \kl{word}, ""word"" \intro{word}, "automata@DBUA" the word "automata" of the scope DBUA.
_QUOTATION_ON_RE = re.compile(
    r"\\usepackage\s*\[[^\]]*\bquotation\b[^\]]*\]\s*\{[^{}]*\bknowledge\b"
    r"|\\knowledgeconfigure\s*\{[^{}]*\bquotation\b"
)
_NOTION_QUOTE_RE = re.compile(
    r'(?<!\\)""((?:[^"\n]|\n(?![ \t]*\n)){1,200}?)""|(?<![\\"])"((?:[^"\n]|\n(?![ \t]*\n)){1,200}?)"(?!")'
)


def knowledge_quotes(preamble: str, body: str) -> str:
    """``body`` with the knowledge package's quoted notions printed as their text (up to the
    ``@`` that names their scope), when ``preamble`` turns its quotation notation on."""
    if '"' not in body or "knowledge" not in preamble or not _QUOTATION_ON_RE.search(preamble):
        return body
    return _NOTION_QUOTE_RE.sub(lambda m: "{" + (m.group(1) or m.group(2) or "").split("@")[0] + "}", body)


def environment_arguments(s: str, i: int, name: str) -> tuple[str, int]:
    """The text arguments (in braces) of the environment ``name`` begun just before ``s[i]``, and
    where its arguments end: ``\\begin{minipage}[t]{0.5\\textwidth}`` has none. An environment
    outside the table loses an optional argument (``\\begin{enumerate}[label=(a)]``) and the
    groups after it that hold settings (``\\begin{mybox}{-1cm}{0pt}``)."""
    spec = ARGUMENTS.get("{" + name + "}")
    try:
        texts, end = read_arguments(s, i, spec or "o")
    except LatexError:
        return "", i
    while spec is None and (m := _SETTING_GROUP_RE.match(s, end)):
        end = m.end()
    return "".join("{" + t + "}" for t in texts if t is not None), end
