"""Street addresses (US, European, military mail) extended over unit / city / zip lines, and the recipient
lines of an address block."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from curation.core.spans import ORGANIZATION, PERSON, STREET_ADDRESS, Span
from curation.detect.base import _GREETING, _NOT_PLACES, _c
from curation.detect.titles import _title_phrase_ok

# --- street addresses -----------------------------------------------------------------------------------
_NUM = r"\d{1,6}[A-Za-z]?(?:[-/]\d{1,5}[A-Za-z]?)?"
_CAP = r"[A-ZÀ-ÖØ-ÞĀ-ŽΑ-ΩА-Я][\w'’.-]*"
# USPS Publication 28, appendix C1 street suffixes (full names and standard abbreviations).
_USPS_FULL = (
    "Alley Annex Arcade Avenue Bayou Beach Bend Bluff Bottom Boulevard Branch Bridge Brook Burg Bypass Camp "
    "Canyon Cape Causeway Center Centre Circle Cliff Club Common Corner Course Court Cove Creek Crescent "
    "Crest Crossing Crossroad Curve Dale Dam Divide Drive Estate Expressway Extension Fall Falls Ferry "
    "Field Flat Ford Forest Forge Fork Fort Freeway Garden Gateway Glen Green Grove Harbor Harbour Haven "
    "Heights Highway Hill Hollow Inlet Island Isle Junction Key Knoll Lake Land Landing Lane Light Loaf "
    "Lock Lodge Loop Mall Manor Meadow Mews Mill Mission Motorway Mount Mountain Neck Orchard Oval Overpass "
    "Park Parkway Pass Passage Path Pike Pine Place Plain Plaza Point Port Prairie Radial Ramp Ranch Rapid "
    "Rest Ridge River Road Route Row Run Shoal Shore Skyway Spring Spur Square Station Stravenue Stream "
    "Street Summit Terrace Throughway Trace Track Trafficway Trail Tunnel Turnpike Underpass Union Valley "
    "Viaduct View Village Ville Vista Walk Wall Way Well Wharf Quay Close Parade Promenade Esplanade "
    "Embankment Broadway Gate Wynd Strand"
).split()
_USPS_ABBR = (
    "Aly Anx Arc Ave Av Byu Blf Btm Blvd Br Brg Brk Byp Cp Cyn Cpe Cswy Ctr Cir Clf Clb Cmn Cor Crse Ct Cv "
    "Crk Cres Crst Xing Xrd Dl Dm Dv Dr Est Expy Ext Fls Fry Fld Flt Frd Frst Frg Frk Ft Fwy Gdn Gdns Gtwy "
    "Gln Grn Grv Hbr Hvn Hts Hwy Hl Hls Holw Inlt Is Jct Ky Knl Lk Lks Lndg Ln Lgt Lck Ldg Mnr Mdw Mdws Ml "
    "Mt Mtn Nck Orch Opas Pkwy Psge Pne Pl Pln Plz Pt Prt Pr Radl Rnch Rpd Rst Rdg Riv Rd Rte Shl Shr Skwy "
    "Spg Sq Sta Stra Strm St Smt Ter Trwy Trce Trak Trfy Trl Trlr Tunl Tpke Upas Un Vly Via Vw Vlg Vl Vis "
    "Wl Wy"
).split()
_US_SUFFIX = (
    "(?:"
    + "|".join(sorted((w + "s?" for w in _USPS_FULL), key=len, reverse=True))
    + "|"
    + "|".join(sorted(_USPS_ABBR, key=len, reverse=True))
    + ")"
)
_US_SUFFIX_LOWER = r"(?:street|avenue|road|boulevard|parkway|highway)"
# Street-type words of other languages.  Short or English-looking ones only count as the tail of a
# compound ("Storgate", "Koskikatu"), so "During 1971" or "Gate 5" are not addresses.
_EU_COMPOUND = (
    r"(?:straße|strasse|str\.|weg|gasse|platz|allee|ring|damm|ufer|steig|pfad|chaussee|markt|graben|hof|katu"
    r"|tie|kuja|polku|väylä|kaari|raitti|vägen|väg|gatan|gata|gränd|stigen|backen|torget|veien|vegen|veg|vei"
    r"|gate|gaten|vej|vænget|gade|allé|straat|laan|plein|gracht|dijk|kade|singel|steeg|utca|út|útja|körút"
    r"|rakpart|sétány|bakken|svingen|stien|haugen|åsen|kroken|gården|løkka|vænge|stræde|torv|plads|maantee"
    r"|iela|gatvė|sokak|caddesi)"
)
_EU_STANDALONE = (
    r"(?:[Uu]\.|[Uu]tca|[Úú]t|[Tt]ér|[Kk]öz|[Ss]or|[Rr]kp\.|[Kk]apu|[Uu]l\.|[Ss]tr\.|[Vv]eien|[Vv]ej|[Gg]ade"
    r"|[Tt]errasse|[Pp]lass|[Aa]llé|[Tt]orv|[Pp]lads|[Ss]træde|[Vv]ägen|[Gg]atan|[Ss]traße|[Ss]trasse"
    r"|[Gg]asse|[Pp]latz|[Aa]llee|[Ss]traat|[Ll]aan|[Tt]rg|[Cc]esta|[Ii]ela|[Tt]änav|[Tt]ee|gate|gata|vei"
    r"|veg|vegen|weg|vägen|väg|katu|tie)"
)
_PREFIX_TYPE = (
    r"(?:[Rr]ue|Avenue|[Aa]v\.?|Boulevard|[Bb]d|[Cc]hemin|Place|[Aa]llée|[Ii]mpasse|[Qq]uai|Route|Cours|Via"
    r"|[Vv]iale|[Pp]iazza|[Pp]iazzale|[Cc]orso|[Ll]argo|[Vv]icolo|[Ss]trada|[Cc]alle|[Aa]venida|[Aa]vda\.?"
    r"|[Pp]aseo|Plaza|[Cc]arrera|[Cc]amino|[Cc]arretera|[Rr]onda|[Tt]ravesía|[Rr]ua|[Tt]ravessa|[Pp]raça"
    r"|[Ee]strada|[Aa]lameda|[Uu]lica|[Uu]l\.|[Aa]leja|[Aa]l\.|[Oo]dos|οδός|[Οο]δ\.|[Ππ]λατεία|[Λλ]εωφόρος"
    r"|[Λλ]εωφ\.|[Уу]лица|[Уу]л\.|[Пп]роспект|[Jj]alan|[Jj]l\.|[Cc]alea|[Bb]ulevardul|[Ss]okak|[Cc]adde"
    r"|[Tt]rg|[Nn]ámestie|[Nn]áměstí)"
)
_PARTICLE = (
    r"(?:de|du|des|la|le|les|del|dei|degli|della|delle|dello|di|da|do|dos|das|van|von|der|den|het|am|an|im"
    r"|zum|zur|y|e|i|al|el|sur|upon|on)"
)
_NAME_WORD = rf"(?:{_CAP}|{_PARTICLE}|\d{{1,3}}(?:st|nd|rd|th|e|er|ème)?(?!\w))"
# A name word; hyphenated parts may start upper case ("Franz-Josef", "Jean-luc"), as may the part after an
# elided prefix ("O'Neil"). Measured: stopping at the second capital left "Josef" of "Franz-Josef Trupp"
# in a release of 2,000 generated documents.
_PNAME = (
    r"(?:[A-ZÀ-ÖØ-ÞĀ-Ž]['’][A-ZÀ-ÖØ-ÞĀ-Ž][a-zà-öø-ÿā-ž]+|[A-ZÀ-ÖØ-ÞĀ-Ž][a-zà-öø-ÿā-ž'’]+)"  # O'Neil | Dana
    r"(?:-[A-ZÀ-ÖØ-ÞĀ-Ža-zà-öø-ÿā-ž][a-zà-öø-ÿā-ž'’]+)*"
)
_STOP = (
    r"(?:The|Of|And|In|On|At|To|For|A|An|Or|By|With|From|Is|Are|Was|My|Our|Your|Their|His|Her|Its|No|Nr|Vol"
    r"|Fig|Table|Section|Chapter|Page|Part|Step|Item|Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
    r"|January|February|March|April|June|July|August|September|October|November|December)"
)
_ANY_WORD = r"(?:[^\W\d_][\w'’.-]*|\d{1,3}(?:st|nd|rd|th|e|er|ème)?(?![\w]))"
_MILITARY = r"(?:PSC|Unit|CMR|USNS|USNV|USS|USCGC)"

_ADDRESS_CORE = _c(
    "|".join(
        (
            # 123 [N] Main [Street] St[.] [NW]
            rf"\b{_NUM}(?:[ \t]+\d{{1,5}})?[ \t]+(?:[NSEW]\.?[ \t]+)?(?:{_NAME_WORD}[ \t]+){{0,4}}?{_CAP}"
            rf"[ \t]+{_US_SUFFIX}\b\.?(?:[ \t]+(?:[NS][EW]?|[EW])\b\.?)?",
            # lower-case text: 12 main street (few words, full suffix only)
            rf"\b{_NUM}[ \t]+(?:[a-z][a-z'-]+[ \t]+){{1,2}}{_US_SUFFIX_LOWER}\b",
            # [123] Hauptstraße 5 / Koskikatu 25 / Kálmán Imre u. 12.
            rf"(?:\b{_NUM}[ \t]+)?(?:{_CAP}[ \t]+){{0,3}}\b(?:[^\W\d_]{{3,}}"
            rf"|(?:[^\W\d_]+-)+)(?i:{_EU_COMPOUND})[ \t]+{_NUM}\b\.?",
            rf"(?:\b{_NUM}[ \t]+)?(?:{_CAP}[ \t]+){{1,3}}{_EU_STANDALONE}[ \t]+{_NUM}\b\.?",
            # [12] rue de la Paix [12] / Avenida Pedro Ulisses 88
            rf"\b{_NUM},?[ \t]+(?i:{_PREFIX_TYPE})[ \t]+(?:{_ANY_WORD}[ \t]+){{0,3}}{_ANY_WORD}"
            rf"(?:,?[ \t]+{_NUM}\b)?",
            rf"\b{_PREFIX_TYPE}[ \t]+(?:{_NAME_WORD}[ \t]+){{0,4}}{_NAME_WORD},?[ \t]+{_NUM}\b",
            # 123 Capitalized Words 45 (European order with a leading building number)
            rf"\b{_NUM}(?: (?!{_STOP}\b){_CAP}){{1,3}} \d{{1,4}}(?:[A-Za-z](?<![sS]))?\b(?![.,]\d)",
            r"\bP\.?[ \t]?O\.?[ \t]+Box[ \t]+\d{1,7}\b",
            # US military mail: PSC 1234, Box 5678 / USNS Name  (then APO/FPO/DPO AA/AE/AP zip)
            rf"\b(?i:{_MILITARY})[ \t]+(?:\d{{1,5}}"
            rf"|{_CAP}(?:[ \t]+{_CAP})?),?[ \t]*(?:(?i:box)[ \t]+\d{{1,6}}\b)?"
            r"(?=[ \t]*\n?[ \t]*(?i:[AFD]PO)\b)",
            r"\b(?i:[AFD]PO)[ \t]+(?i:A[AEP])[ \t]+\d{5}\b",
        )
    )
)
_UNIT = r"(?:Apt|Apartment|Suite|Ste|Unit|Room|Rm|Floor|Fl|Bldg|Building|Flat|Box|PO Box|P\.O\. Box|No|Nr)\.?"
_ZIP = (
    r"(?:\d{5}(?:-\d{4})?|\d{3}[ \t]\d{2}|\d{4}|\d{2}-\d{3}|[A-Z]\d[A-Z][ \t]?\d[A-Z]\d"
    r"|[A-Z]{1,2}\d[A-Z\d]?[ \t]?\d[A-Z]{2})"
)
_ADDRESS_NEXT = _c(
    "|".join(
        (
            # European "ZIP City" on the same line: ", 04709 Legros-les-Bains"
            rf"[ \t]*,?[ \t]*(?:\n[ \t>?*-]*)?\d{{4,5}}[ \t]+{_CAP}(?:[ -](?:{_CAP}"
            rf"|{_PARTICLE})){{0,3}}(?=[ \t]*(?:[,\n.;?!)]|$))",
            # unit / zip / two-letter state / military post office: may follow on the same line
            rf"(?:[ \t]*,?[ \t]*(?:\n[ \t>?*-]*){{0,2}})"
            rf"(?:(?i:{_UNIT})[ \t]*#?[ \t]*[A-Za-z]?\d{{1,5}}[A-Za-z]?\b|#[ \t]?\d{{1,5}}\b"
            rf"|{_ZIP}\b(?![\w-])|[A-Z]{{2}}\b(?![\w'’-])|(?i:[AFD]PO[ \t]+A[AEP][ \t]+\d{{5}})\b)",
            # a second street-name part on the same line: "... 31 Zezig Streets"
            rf"[ \t]+(?:{_CAP}[ \t]+){{1,2}}{_US_SUFFIX}\b\.?",
            # a place name (city, region, country) only as its own comma/newline-separated component
            rf"(?:[ \t]*,[ \t]*(?:\n[ \t>?*-]*)?"
            rf"|[ \t]*\n[ \t>?*-]*(?:\n[ \t>?*-]*)?(?:,[ \t]*)?)(?:{_CAP}(?:[ \t-](?:{_CAP}|{_PARTICLE}"
            rf"|\([^()\n]{{1,30}}\)|\d{{1,2}})){{0,3}})(?=[ \t]*(?:[,\n.?!]|$|[ \t]+{_ZIP}\b"
            rf"|[ \t]+[A-Z]{{2}}\b))",
        )
    )
)
_ADDRESS_MAX_PARTS = 6
# "... Apt. 819 Rzeszów Poland": after a unit number, capitalised words up to the end of the clause are
# the city / region / country even without commas.
_ENDS_WITH_UNIT = _c(rf"\b(?i:{_UNIT})[ \t]*#?[ \t]*[A-Za-z]?\d{{1,5}}[A-Za-z]?$")
_PLACE_AFTER_UNIT = _c(
    rf"[ \t]+(?!{_STOP}\b){_CAP}(?:[ \t-]+(?:{_CAP}|{_PARTICLE})){{0,3}}(?=[ \t]*(?:[,\n.;?!)]|$|[ \t]+{_ZIP}\b))"
)


# A postcode alone on its line (4-5 digits, "123 45", "12-345"): too short for a phone number.
_ZIP_LINE = _c(r"[ \t]*,?[ \t]*(?:\n[ \t>?*-]*){1,2}(?:\d{4,5}(?:-\d{4})?|\d{3}[ \t]\d{2}|\d{2}-\d{3})")
_LINE_END = _c(r"[ \t]*(?:\r?\n|$)")


def _find_addresses(text: str) -> Iterator[Span]:
    """Street line cores extended over following unit/city/state/zip/country components.

    In an all-lower-case text ("12 main street, springfield, il") the components after the street are
    matched on a title-cased copy (same offsets), since place names there carry no capitals."""
    parts_text = text
    if not any(c.isupper() for c in text):
        titled = text.title()
        if len(titled) == len(text):
            parts_text = titled
    for m in _ADDRESS_CORE.finditer(text):
        end = m.end()
        for _ in range(_ADDRESS_MAX_PARTS):
            nxt = _ADDRESS_NEXT.match(parts_text, end)
            if (nxt is None or nxt.end() == end) and _ENDS_WITH_UNIT.search(text, max(0, end - 30), end):
                nxt = _PLACE_AFTER_UNIT.match(parts_text, end)
            if nxt is None or nxt.end() == end:
                break
            part = nxt.group(0)
            words = re.findall(r"[^\W\d_][\w'’-]*", part)
            if words and words[0].lower() in _NOT_PLACES:
                break  # "...Street\nThanks" is a sign-off, not a city
            if not words and "\n" in part and not (_ZIP_LINE.fullmatch(part) and _LINE_END.match(text, nxt.end())):
                break  # a bare number on the next line is more often a phone than a postcode (unless ZIP-sized)
            end = nxt.end()
        start = m.start()
        lead = _LEADING_NUMBER.search(text, max(0, start - 8), start)
        if lead is not None and m.group(0)[:1].isdigit():
            start = lead.start()  # "010 63 Avenue du Golf": a building number before the house number
        while end > start and text[end - 1] in " \t\n,":
            end -= 1
        last_word = re.search(r"(\w+)\.$", text[start:end])
        if last_word and len(last_word.group(1)) >= 5:
            end -= 1  # sentence full stop, not an abbreviation such as "St."
        yield Span(start, end, STREET_ADDRESS, 0.7, "pattern:street_address")
    for m in _INTERSECTION.finditer(text):
        yield Span(m.start("v"), m.end("v"), STREET_ADDRESS, 0.65, "pattern:intersection")


# one more number right before a street line that starts with its house number (not part of a longer
# digit run such as a phone number)
_LEADING_NUMBER = _c(r"(?:^|(?<=[\s:>]))(?<![\d][ \t])\d{1,6}[ \t]+$", re.MULTILINE)
# "the corner of Elm Street and 5th Avenue": both streets of an intersection
_STREETISH = (
    rf"(?:{_NUM}[ \t]+)?(?:(?i:{_PREFIX_TYPE})[ \t]+)?(?:{_NAME_WORD}[ \t]+){{0,3}}{_CAP}"
    rf"(?:[ \t]+{_NUM}\b)?(?:[ \t]+{_US_SUFFIX}\b\.?)?"
)
_INTERSECTION = _c(rf"\b(?i:corner)[ \t]+of[ \t]+(?P<v>{_STREETISH}[ \t]+(?:and|&)[ \t]+{_STREETISH})")


# Words that end an organisation's name ("Acme Widgets Inc.", "Nordic Data Consulting"): legal forms and
# common business nouns.
_ORG_SUFFIX = (
    r"(?:Inc|Incorporated|Corp|Corporation|Co|Company|Ltd|Limited|LLC|LLP|LP|PLC|plc|GmbH|AG|KG|SA|S\.A|SAS"
    r"|SARL|SpA|S\.p\.A|SL|BV|B\.V|NV|N\.V|AB|ASA|A/S|Oy|Oyj|Pty|Pvt|KK|Group|Holdings?|Technologies"
    r"|Technology|Systems|Solutions|Software|Labs|Laboratories|Partners|Associates|Consulting|Consultants"
    r"|Enterprises|Industries|International|Ventures|Capital|Networks|Analytics|Media|Studios?|Foundation"
    r"|Institute|Bank|Insurance|Pharmaceuticals|Logistics|Services|Agency|Markets|Brothers|Bros|Sons)\b\.?"
)
_ORG_CUE = _c(rf"(?:^|[ \t]){_ORG_SUFFIX}(?![\w'’-])|\w,[ \t]+\w[^,]*[ \t](?:and|&)[ \t]")
# Lines above an address that name the place, not the recipient.
_BLOCK_HEADINGS = frozenset(
    "address addresses shipping billing mailing postal delivery deliver ship send return contact office "
    "offices headquarters hq location locations directions home work residence correspondence invoice "
    "to from attn attention via".split()
)
_BLOCK_LINE = _c(r"^[^\W\d_][\w'’.&-]*(?:,?[ \t]+[^\W\d_&][\w'’.&-]*|[ \t]+&){0,5}$")
_BLOCK_LABEL = _c(r"^(?P<l>[A-Za-z][A-Za-z ]{0,30}):[ \t]*(?P<v>\S.*)$")
_BLOCK_WORD_OK = frozenset("and & of the van von de der den da di du del della le la".split())


def _recipient_line_ok(line: str, lower_doc: bool) -> bool:
    """1-6 words of letters (no digits), capitalised (particles aside) or in an all-lower-case text; no
    greeting, sign-off, heading or occupation."""
    if not _BLOCK_LINE.match(line) or _GREETING.match(line) or line.endswith(":"):
        return False
    words = [w.strip(",.") for w in line.split()]
    if words[0].lower() in _NOT_PLACES or any(w.lower() in _BLOCK_HEADINGS for w in words):
        return False
    if _title_phrase_ok(line) and not _ORG_CUE.search(line):
        return False
    if lower_doc:
        return True
    return all(w[:1].isupper() or w.lower() in _BLOCK_WORD_OK for w in words if w)


def _find_recipients(text: str, addresses: Sequence[Span]) -> Iterator[Span]:
    """Recipient lines of an address block: up to three name / company lines right above a street line
    that starts its own line ("Ada Lovelace\nAcme Ltd\n12 Main Street").  Job-title lines in between are
    skipped (the title rule tags them); "Ship to: Ada Lovelace" contributes the part after the colon."""
    lower_doc = not any(c.isupper() for c in text)
    done: set[int] = set()
    for addr in addresses:
        line_start = text.rfind("\n", 0, addr.start) + 1
        if line_start in done or text[line_start : addr.start].strip(" \t>*?-0123456789") or line_start == 0:
            continue
        done.add(line_start)
        found: list[tuple[int, int]] = []
        pos, blanks, names = line_start - 1, 0, 0
        while pos > 0 and names < 3:
            prev_start = text.rfind("\n", 0, pos) + 1
            start, end = prev_start, pos
            while start < end and text[start] in " \t>*?-":
                start += 1
            while end > start and text[end - 1] in " \t,":
                end -= 1
            line = text[start:end]
            pos = prev_start - 1
            if not line:
                blanks += 1
                if blanks > 1:
                    break
                continue
            label = _BLOCK_LABEL.match(line)
            if label is not None:
                if _recipient_line_ok(label.group("v"), lower_doc):
                    found.append((start + label.start("v"), end))
                break
            if _recipient_line_ok(line, lower_doc):
                found.append((start, end))
                names += 1
                continue
            if _title_phrase_ok(line):
                continue
            break
        if not found:
            continue
        top = text[found[-1][0] : found[-1][1]]
        for i, (start, end) in enumerate(found):
            value = text[start:end]
            is_person = (i == len(found) - 1 or value == top) and not _ORG_CUE.search(value)
            yield Span(start, end, PERSON if is_person else ORGANIZATION, 0.55, "pattern:address_block")
