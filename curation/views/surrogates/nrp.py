"""Nationalities, religious and political groups (NRP): another group of the same kind, in the same form."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache

from curation.views.surrogates.casing import _match_case

# One group per token, its forms joined by "|".  "Italian/s" is a noun that doubles as an adjective, with
# its plural ("/s" and "/es" append, "Tory/Tories" spells it out); a bare word is invariant: an adjective
# that is also the collective noun ("Chinese", "the French").  "_" stands for a space.  "~" marks a form
# that is recognized in originals but never drawn: nouns that are no adjectives ("Pole", "Jew"), adjectives
# of religions and parties ("Jewish", "Democratic"), ethnic / regional groups, rare or loaded words, and
# words that read as something else in lower case ("polish").  Drawn forms are common, neutral words.
# Recognition covers at least every word of the NRP lexicon in curation/detect/nrp.py (a test checks it).
_NRP_GROUPS = {
    "nationality": """
        Afghan/s Albanian/s Algerian/s American/s Andorran/s Angolan/s Argentine/s|~Argentinian/s Armenian/s
        Australian/s Austrian/s Azerbaijani/s|~Azeri/s Bahamian/s Bahraini/s Bangladeshi/s Barbadian/s
        Belarusian/s Belgian/s Belizean/s Bolivian/s Bosnian/s ~Botswanan/s Brazilian/s ~Bruneian/s Bulgarian/s
        ~Burkinabe Burundian/s Cambodian/s Cameroonian/s Canadian/s ~Cape_Verdean/s Chadian/s Chilean/s Colombian/s
        ~Comorian/s Costa_Rican/s Croatian/s Cuban/s Cypriot/s Czech/s ~Djiboutian/s Dominican/s
        Ecuadorian/s|~Ecuadorean/s Egyptian/s Emirati/s ~Equatoguinean/s Eritrean/s Estonian/s Ethiopian/s
        Fijian/s Filipino/s|~Filipina/s Gambian/s Georgian/s German/s Ghanaian/s Greek/s Grenadian/s
        Guatemalan/s Guinean/s Haitian/s Honduran/s Hungarian/s Indian/s Indonesian/s Iranian/s|~Persian/s
        Iraqi/s Israeli/s Italian/s Ivorian/s Jamaican/s Jordanian/s Kazakh/s|~Kazakhstani/s Kenyan/s
        ~Kiribati Korean/s Kosovar/s Kuwaiti/s ~Kyrgyz Laotian/s|~Lao Latvian/s Liberian/s Libyan/s
        Lithuanian/s Macedonian/s Malawian/s Malaysian/s Maldivian/s Malian/s Mauritanian/s Mauritian/s
        Mexican/s ~Micronesian/s Moldovan/s ~Monegasque/s Mongolian/s Montenegrin/s Moroccan/s Mozambican/s
        Namibian/s ~Nauruan/s Nepali/s|Nepalese Nicaraguan/s Nigerian/s ~Nigerien/s Norwegian/s Omani/s
        Pakistani/s ~Palauan/s Palestinian/s Panamanian/s Paraguayan/s Peruvian/s Qatari/s Romanian/s
        Russian/s Rwandan/s Salvadoran/s Samoan/s Saudi/s Serbian/s|~Serb/s Singaporean/s Slovak/s|~Slovakian/s
        Slovenian/s|~Slovene/s Somali/s South_African/s Sri_Lankan/s ~Swazi/s Syrian/s Tajik/s Tanzanian/s
        Thai/s Tongan/s Trinidadian/s Tunisian/s ~Turkmen/s ~Tuvaluan/s Ugandan/s Ukrainian/s Uruguayan/s
        Uzbek/s ~Vanuatuan/s Venezuelan/s Yemeni/s Zambian/s Zimbabwean/s ~Antiguan/s ~Marshallese ~Malagasy
        British|~Briton/s|~Brit/s Chinese Danish|~Dane/s Dutch|~Dutchman/Dutchmen|~Dutchwoman/Dutchwomen
        English|~Englishman/Englishmen|~Englishwoman/Englishwomen Finnish|~Finn/s
        French|~Frenchman/Frenchmen|~Frenchwoman/Frenchwomen Irish|~Irishman/Irishmen|~Irishwoman/Irishwomen
        Japanese Lebanese Maltese ~Polish|~Pole/s Portuguese Scottish|~Scot/s Spanish|~Spaniard/s
        Swedish|~Swede/s Swiss Turkish|~Turk/s Vietnamese Welsh|~Welshman/Welshmen Icelandic|~Icelander/s
        Luxembourgish|~Luxembourger/s ~Liechtensteiner/s Taiwanese Sudanese Senegalese Congolese Burmese
        Bhutanese Guyanese ~Gabonese ~Togolese ~Beninese ~Surinamese ~Seychellois
        ~African/s ~Asian/s ~European/s ~Latino/s|~Latina/s|~Latinx ~Hispanic/s ~Arab/s|~Arabian/s
        ~Caribbean/s ~Scandinavian/s ~Balkan/s ~Kurdish|~Kurd/s ~Basque/s ~Catalan/s ~Flemish ~Walloon/s
        ~Bavarian/s ~Sicilian/s ~Tibetan/s ~Uyghur/s ~Maori/s ~Aboriginal/s ~Inuit ~Chechen/s ~Dagestani/s
        ~Tatar/s ~Bashkir/s ~Berber/s ~Pashtun/s ~Punjabi/s ~Bengali/s ~Tamil/s ~Gujarati/s
    """,
    "religion": """
        Christian/s Catholic/s Protestant/s Muslim/s|~Islamic|~Moslem/s Hindu/s Buddhist/s Sikh/s Jain/s
        Taoist/s Mormon/s Lutheran/s Baptist/s Methodist/s Anglican/s Presbyterian/s Quaker/s Mennonite/s
        Pentecostal/s Evangelical/s Zoroastrian/s Sunni/s Shia/s|~Shiite/s ~Rastafarian/s ~Jewish|~Jew/s
        ~Amish ~Orthodox ~Shinto ~Atheist/s ~Agnostic/s
    """,
    "politics": """
        Democrat/s|~Democratic Republican/s Conservative/s Liberal/s Socialist/s Communist/s Libertarian/s
        Progressive/s Centrist/s Tory/Tories Marxist/s Social_Democrat/s Populist/s Federalist/s Monarchist/s
        ~Labour ~Nazi/s ~Fascist/s
    """,
}
_NRP_FALLBACK_KIND = "nationality"  # most NRP mentions name a nationality
_NRP_RELAX_AFTER = 8  # draws after which the a/an sound of the original is no longer preserved


@dataclass(frozen=True, slots=True)
class _NrpGroup:
    """One nationality / religious group / political group: what may be drawn from it."""

    kind: str
    key: str
    singular: str | None = None  # drawn noun-and-adjective form ("Italian"); None if not drawn
    plural: str | None = None
    invariant: str | None = None  # drawn invariant form ("Chinese")


def _nrp_forms(token: str) -> Iterator[tuple[str, str, bool]]:
    """(form, form class, drawn) for each form of one group token."""
    for part in token.split("|"):
        drawn = not part.startswith("~")
        word = part.lstrip("~").replace("_", " ")
        if "/" not in word:
            yield word, "invariant", drawn
            continue
        singular, plural = word.split("/")
        plural = singular + plural if plural in ("s", "es") else plural
        yield singular, "singular", drawn
        yield plural, "plural", drawn


@cache
def _nrp_lexicon() -> tuple[dict[str, tuple[_NrpGroup, str]], dict[str, list[_NrpGroup]]]:
    """Casefolded form -> (group, form class), and kind -> groups in list order."""
    forms: dict[str, tuple[_NrpGroup, str]] = {}
    groups: dict[str, list[_NrpGroup]] = {}
    for kind, text in _NRP_GROUPS.items():
        for token in text.split():
            parsed = list(_nrp_forms(token))
            drawn = {cls: form for form, cls, ok in reversed(parsed) if ok}
            key = f"{kind}:{parsed[0][0].casefold()}"
            group = _NrpGroup(kind, key, drawn.get("singular"), drawn.get("plural"), drawn.get("invariant"))
            groups.setdefault(kind, []).append(group)
            for form, cls, _ in parsed:
                forms.setdefault(form.casefold(), (group, cls))
    return forms, groups


def _nrp_lookup(word: str) -> tuple[_NrpGroup, str] | None:
    """The group and form class of one form; an unlisted plural of a listed form counts too."""
    forms = _nrp_lexicon()[0]
    folded = " ".join(word.casefold().replace("-", " ").split())
    if folded in forms:
        return forms[folded]
    for suffix in ("es", "s"):
        base = folded.removesuffix(suffix)
        if base != folded and base in forms:
            return forms[base][0], "plural"
    return None


def nrp_reading(value: str) -> tuple[str, str, str | None, frozenset[str]]:
    """(kind, form class, group key, keys of every group named) of an NRP original.

    The whole value is looked up first, then its words (the last recognized one, the head in English,
    decides: "Jewish-American" reads as a nationality).  Unknown values read as a nationality, or as a
    political group when they end in -ist(s); plural when they end in a single s.  The group key is set
    only when the whole value is one listed form.
    """
    whole = _nrp_lookup(value)
    if whole is not None:
        group, cls = whole
        return group.kind, cls, group.key, frozenset({group.key})
    hits = [hit for word in re.findall(r"[^\W\d_]+", value) if (hit := _nrp_lookup(word)) is not None]
    named = frozenset(group.key for group, _ in hits)
    if hits:
        group, cls = hits[-1]
        return group.kind, cls, None, named
    folded = value.strip().casefold()
    kind = "politics" if re.search(r"ists?$", folded) else _NRP_FALLBACK_KIND
    cls = "plural" if re.search(r"[^s]s$", folded) and len(folded) > 3 else "singular"
    return kind, cls, None, named


def _takes_an(word: str) -> bool:
    """Whether 'an' goes before ``word``, by its spelling ("an Italian", "a European", "a Ugandan")."""
    return bool(re.match(r"(?!eu|uk|u[a-z][aeiou]|one)[aeiou]", word.strip().casefold()))


def nrp_surrogate(
    value: str, rng: random.Random, allowed: Callable[[str], bool] | None = None, keep_sound: bool = True
) -> str | None:
    """Another group of the same kind in the same form: "Italians" -> "Norwegians", "catholic" -> "buddhist".

    Nationalities give nationalities, religious groups religious groups, political groups political
    groups; plural stays plural, an invariant form ("Chinese") gets an invariant one where the kind has
    them (else the singular), and the letter case of the original is kept.  The groups the original
    names are never drawn, nor any candidate ``allowed`` rejects.  With ``keep_sound`` candidates that
    take the same article (a/an) are preferred.  The rng shuffles the groups and the first fitting one
    wins, so one rng gives every form of a group the same other group ("Italian" and "Italians" ->
    "Egyptian" and "Egyptians") unless ``allowed`` rejects just one of its forms.  None when no group
    is left.
    """
    kind, cls, _, named = nrp_reading(value)
    groups = [g for g in _nrp_lexicon()[1][kind] if g.key not in named]
    rng.shuffle(groups)
    for tier in [cls] + (["singular"] if cls == "invariant" else []):
        pool = [_match_case(value, word) for g in groups if (word := getattr(g, tier)) is not None]
        pool = [word for word in pool if allowed is None or allowed(word)]
        if keep_sound:
            pool = [word for word in pool if _takes_an(word) == _takes_an(value)] or pool
        if pool:
            return pool[0]
    return None
