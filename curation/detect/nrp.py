"""Nationalities, religious and political groups (NRP) from a word list."""

from __future__ import annotations

import re
from collections.abc import Iterator

from curation.core.spans import NRP, Span
from curation.detect.base import _c

# --- nationalities, religious and political groups (NRP) ---------------------------------------------------
# Demonyms of sovereign states and large regions, religious adherents and political affiliations: they narrow
# a person down (GDPR special categories), and spaCy's NORP misses them in lower case ("i am cambodian").
# Label NRP, like Presidio's NRP / spaCy's NORP (the surrogate engine keeps its own copy of these words).
_DEMONYMS = """
afghan albanian algerian american andorran angolan antiguan argentine argentinian armenian australian
austrian azerbaijani azeri bahamian bahraini bangladeshi barbadian belarusian belgian belizean beninese
bhutanese bolivian bosnian botswanan brazilian british bruneian bulgarian burkinabe burmese burundian
cambodian cameroonian canadian cape-verdean chadian chilean chinese colombian comorian congolese
costa-rican croatian cuban cypriot czech danish djiboutian dominican dutch ecuadorian ecuadorean egyptian
emirati englishman englishmen englishwoman englishwomen equatoguinean eritrean estonian ethiopian
fijian filipino filipina finnish french gabonese gambian georgian german ghanaian greek grenadian
guatemalan guinean guyanese haitian honduran hungarian icelandic icelander indian indonesian iranian
iraqi irish israeli italian ivorian jamaican japanese jordanian kazakh kazakhstani kenyan kiribati
korean kosovar kuwaiti kyrgyz lao laotian latvian lebanese liberian libyan liechtensteiner lithuanian
luxembourgish luxembourger macedonian malagasy malawian malaysian maldivian malian maltese marshallese
mauritanian mauritian mexican micronesian moldovan monegasque mongolian montenegrin moroccan mozambican
namibian nauruan nepalese nepali nicaraguan nigerian nigerien norwegian omani pakistani palauan
palestinian panamanian paraguayan persian peruvian polish portuguese qatari romanian russian rwandan
salvadoran samoan saudi scottish scot scots senegalese serbian seychellois singaporean slovak slovakian
slovenian somali south-african spanish sri-lankan sudanese surinamese swazi swedish swiss syrian
taiwanese tajik tanzanian thai togolese tongan trinidadian tunisian turkish turkmen tuvaluan ugandan
ukrainian uruguayan uzbek vanuatuan venezuelan vietnamese welsh yemeni zambian zimbabwean
african asian european latino latina latinx hispanic arab arabian caribbean scandinavian balkan
kurdish kurd basque catalan flemish walloon bavarian sicilian tibetan uyghur maori aboriginal
inuit chechen dagestani tatar bashkir berber pashtun punjabi bengali tamil gujarati sikh
"""
_RELIGIOUS_POLITICAL = """
christian christians catholic catholics protestant protestants muslim muslims moslem islamic jew jews jewish
hindu hindus buddhist buddhists sikhs jain jains taoist shinto shia shiite shiites shias sunni sunnis
mormon mormons evangelical evangelicals lutheran lutherans baptist baptists methodist methodists
anglican anglicans presbyterian presbyterians quaker quakers amish mennonite mennonites pentecostal
zoroastrian rastafarian atheist atheists agnostic agnostics
"""
# Cased only: as lower-case words these are ordinary adjectives/nouns ("polish the car", "a liberal dose").
_CASED_GROUPS = (
    "Democrat Democrats Democratic Republican Republicans Conservative Conservatives Liberal Liberals "
    "Labour Tory Tories Communist Communists Socialist Socialists Marxist Marxists Libertarian Libertarians "
    "Nazi Nazis Fascist Fascists Orthodox Polish Turk Turks Scot Dane Danes Swede Swedes Finn Finns Pole Poles "
    "Brit Brits Briton Britons"
).split()


def _nrp_pattern() -> re.Pattern[str]:
    words = set()
    for w in (_DEMONYMS + _RELIGIOUS_POLITICAL).split():
        w = w.replace("-", " ")
        words.add(w)
    lower = sorted(words - {w.lower() for w in _CASED_GROUPS}, key=len, reverse=True)
    plural = r"(?:s|es)?"
    lower_alt = "|".join(re.escape(w).replace(r"\ ", r"[ \t-]") for w in lower)
    cased_alt = "|".join(sorted(_CASED_GROUPS, key=len, reverse=True))
    return _c(
        rf"(?<![\w'’-])(?:(?i:{lower_alt}){plural}|(?:{cased_alt}))(?![\w'’-])"
        # part of a proper name ("European Union", "American Airlines"): that name is the entity
        r"(?![ \t]+[A-Z][a-z])"
        r"(?![ \t]+(?i:language|translation|version|subtitles|dub|grammar|lesson|course|class|teacher))"
    )


_NRP = _nrp_pattern()


def _find_nrp(text: str) -> Iterator[Span]:
    for m in _NRP.finditer(text):
        yield Span(m.start(), m.end(), NRP, 0.6, "pattern:nrp")
