"""The sentences an attacker writes to an agent, in the five product languages.

Each rule is a kind (``prospect_memory.core.integrity.KINDS``), the words one of which
must occur in the text (lower-cased) before the rule's pattern is tried at all (most
research never mentions them, so most rules cost one substring search), and the pattern.

The rules look for an AI spoken to, an order to forget, hide or keep quiet, and an order
that sends, calls or rewrites; never for the words "AI", "assistant", "agent" or
"instructions" alone: research talks about AI products, support agents and onboarding
instructions every day, and ``datasets/integrity_set.jsonl`` measures both sides.
"""

from __future__ import annotations

from typing import NamedTuple


class Rule(NamedTuple):
    kind: str
    triggers: tuple[str, ...]
    pattern: str


# An address read from the start of its run of characters only: tried at every position of a
# long run without an "@" ("a-a-a-..."), it would read the run to its end from each.
_EMAIL = r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
_URL = r"(?:https?://|www\.)\S+"
_DEST = rf"(?:{_EMAIL}|{_URL}|webhook|endpoint)"
_W = r"[\w'’-]+"
# Text up to the end of the sentence (a dot inside an address or "e.g." does not end it).
_SENTENCE = r"(?:[^.!?\n]|[.!?](?=[\w/]))"


def _words(n: int) -> str:
    """Up to ``n`` words (lazily)."""
    return rf"(?:{_W}[\s,]+){{0,{n}}}?"


# A sentence or clause begins: the text's start, a line, or after punctuation.
_START = r"(?:^|(?<=[.!?:;\n>(\[\"„“«*|—–])\s*|(?<=\s[-–—]\s)|(?<=\.\.\.\s))"
# Words that may open an address: "PS", "Note to", "Hey", "Important for", ...
_OPENERS = {
    "en": r"(?:ps:?\s+|p\.s\.:?\s+|note\s+(?:to|for)\s+|notice\s+to\s+|message\s+(?:to|for)\s+|"
    r"instructions?\s+(?:to|for)\s+|important\s+(?:note\s+)?(?:to|for)\s+|reminder\s+(?:to|for)\s+|"
    r"attention,?\s+|dear\s+|hey,?\s+|hi,?\s+|hello,?\s+|yo,?\s+|ok(?:ay)?,?\s+|so,?\s+|"
    r"(?:this\s+is\s+)?for\s+|to\s+)?",
    "de": r"(?:ps:?\s+|p\.s\.:?\s+|hinweis\s+(?:an|für)\s+|nachricht\s+(?:an|für)\s+|"
    r"anweisung(?:en)?\s+(?:an|für)\s+|wichtig\s+für\s+|achtung,?\s+|hallo,?\s+|hey,?\s+|"
    r"hi,?\s+|liebe[rs]?\s+|an\s+|für\s+)?(?:liebe[rs]?\s+)?",
    "fr": r"(?:ps:?\s+|p\.s\.:?\s+|note\s+(?:à|pour)\s+|message\s+(?:à|pour)\s+|avis\s+(?:à|aux)\s+|"
    r"consigne\s+(?:à|pour)\s+|instructions?\s+(?:à|pour)\s+|important\s+pour\s+|"
    r"attention,?\s+|salut,?\s+|bonjour,?\s+|coucou,?\s+|cher\s+|chère\s+|pour\s+|à\s+)?",
    "es": r"(?:ps:?\s+|p\.d\.:?\s+|nota\s+para\s+|mensaje\s+para\s+|aviso\s+(?:para|a)\s+|"
    r"instrucci(?:ón|ones)\s+para\s+|importante\s+para\s+|atención,?\s+|oye,?\s+|hola,?\s+|"
    r"bueno,?\s+|querid[oa]s?\s+|estimad[oa]s?\s+|para\s+|a\s+)?",
    "pl": r"(?:ps:?\s+|p\.s\.:?\s+|uwaga\s+(?:dla|do)\s+|wiadomość\s+dla\s+|notatka\s+dla\s+|"
    r"informacja\s+dla\s+|polecenie\s+dla\s+|instrukcj[ae]\s+dla\s+|ważne\s+dla\s+|uwaga,?\s+|"
    r"hej,?\s+|ej,?\s+|cześć,?\s+|drog[iaie]+\s+|dla\s+|do\s+)?",
}
_QUALIFIER = (
    r"(?:[\w-]*(?:ai|ki|ia|llm|gpt|bot|automat|autonom|summar|zusammenfass|résum|resum|podsumow|"
    r"hiring|recruit|research|recherch|investig|sales|vertrieb|vente|venta|sprzeda|brows|coding|"
    r"web|shopping|mail|virtual|virtuel|digital|smart|intelligent|generativ|outreach|prospect|"
    r"scor|lead|pan|pani|liebe|cher|chère|querid|estimad|drog)[\w-]*(?:\s+(?:and|und|et|y|i|"
    r"or|oder|ou|o|lub|albo)\s+|\s+))"
)
# Who is spoken to: an AI (possibly "with terminal access", "reading this page").
_AI = {
    "en": r"(?:the\s+|any\s+|all\s+|every\s+|each\s+|our\s+|you\s+)?" + _QUALIFIER + "{0,2}?"
    r"(?:ai|a\.i\.|"
    r"llms?|gpts?|chatgpt|claude|gemini|copilot|language\s+models?|models?|assistants?|chatbots?|"
    r"bots?|agents?|crawlers?|scrapers?|recruiters?|helpers?|summari[sz]ers?)",
    "de": r"(?:die\s+|der\s+|den\s+|das\s+|alle\s+|jede[rsn]?\s+|liebe[rs]?\s+)?"
    + _QUALIFIER
    + "{0,2}?"
    r"(?:ki|kis|k\.i\.|ki-[\w-]+|künstliche\s+intelligenz(?:en)?|sprachmodell(?:e|en)?|modell|"
    r"llms?|chatbots?|bots?|assistent(?:en|in)?|agent(?:en)?|crawler|roboter)",
    "fr": r"(?:l'|la\s+|le\s+|les\s+|tout\s+|toute\s+|tous\s+les\s+|toutes\s+les\s+)?"
    + _QUALIFIER
    + "{0,2}?"
    r"(?:ia|i\.a\.|intelligences?\s+artificielles?|assistant(?:e)?s?|agents?"
    r"(?:\s+(?:ia|d'ia|conversationnels?|autonomes?))?|modèles?(?:\s+de\s+langage)?|llms?|"
    r"chatbots?|bots?|robots?(?:\s+d'ia)?|crawlers?)",
    "es": r"(?:la\s+|el\s+|los\s+|las\s+|cualquier\s+|toda\s+|todo\s+|todos\s+los\s+|"
    r"todas\s+las\s+)?" + _QUALIFIER + "{0,2}?"
    r"(?:ia|ias|i\.a\.|inteligencias?\s+artificial(?:es)?|"
    r"asistentes?|agentes?(?:\s+de\s+ia)?|modelos?(?:\s+de\s+lenguaje)?|llms?|chatbots?|bots?|"
    r"robots?|rastreadores?(?:\s+de\s+ia)?)",
    "pl": r"(?:wszyscy\s+|wszystkie\s+|każdy\s+|każda\s+|drogi\s+|droga\s+|drodzy\s+)?"
    + _QUALIFIER
    + "{0,2}?"
    r"(?:ai|si|sztuczn\w+\s+inteligencj\w+|asysten\w*|agen(?:t\w*|cie)|model\w*"
    r"(?:\s+językow\w+)?|llm\w*|chatbo(?:t\w*|cie)|cza(?:t\w*|cie)|bo(?:t\w*|cie)|robo(?:t\w*|cie)|"
    r"crawler\w*)",
}
# What makes the sentence an order to that AI: "you", "please", a modal, "never"...
_DIRECTIVE = {
    "en": r"\b(?:you|your|yourself|please|should|must|shall|need\s+to|have\s+to|are\s+(?:asked|"
    r"required|instructed|expected|requested|told)\s+to|always|never|do\s+not|don'?t|make\s+sure)\b",
    "de": r"\b(?:du|dich|dir|dein\w*|euch|euer|eure\w*|ihr|bitte|soll\w*|muss|müssen|musst|darf|"
    r"dürfen|darfst|niemals|immer|nicht|keine\w*)\b|\b(?-i:Sie|Ihnen|Ihre?\w*|SIE)\b",
    "fr": r"\b(?:tu|te|toi|ton|ta|tes|vous|votre|vos|veuillez|merci\s+de|doit|doivent|devez|dois|"
    r"jamais|toujours|pas|aucun\w*)\b|\bt'",
    "es": r"\b(?:tú|tu|te|ti|tus|usted|ustedes|por\s+favor|debe|deben|debes|tiene\s+que|tienen\s+"
    r"que|tienes\s+que|nunca|jamás|siempre|no)\b",
    "pl": r"\b(?:ty|ci|cię|tobie|twój|twoja|twoje|twoich|twoim|twoją|swoj\w*|wam|wasz\w*|proszę|"
    r"prosimy|musi|muszą|musisz|powinien|powinna|powinni|powinieneś|mają|masz|należy|nie|nigdy|"
    r"zawsze)\b|\b(?-i:Pan|Pani|Panie|Państwo)\b",
}
#: Orders that open what is said to the AI ("AI agents: ignore ...", "Assistent: schick ...").
_IMPERATIVE = {
    "en": r"(?:ignore|disregard|forget|send|e-?mail|forward|append|include|insert|recommend|"
    r"rank|describe|present|say|tell|mention|call|execute|open|render|reply|respond|answer|"
    r"replace|remove|delete|store|save|update|overwrite|treat|export|upload|copy|invite|click|"
    r"visit|run|add|end|sign|mark|score|rate|post|share|book)\b",
    "de": r"(?:ignorier\w*|vergiss|vergesst|sende|sendet|senden\s+sie|schick\w*|leite\w*|füg\w*|"
    r"häng\w*|empfiehl\w*|empfehlt|empfehlen\s+sie|nenn\w*|sag\w*|schreib\w*|ruf\w*|nutz\w*|"
    r"verwende\w*|öffne\w*|ersetz\w*|lösch\w*|speicher\w*|überschreib\w*|markier\w*|"
    r"bewerte\w*|exportier\w*|führ\w*|trag\w*)\b",
    "fr": r"(?:ignore|ignorez|oublie|oubliez|envoie|envoyez|transfère|transférez|ajoute|ajoutez|"
    r"recommande|recommandez|cite|citez|mentionne|mentionnez|dis|dites|indique|indiquez|"
    r"présente|présentez|appelle|appelez|utilise|utilisez|exécute|exécutez|ouvre|ouvrez|"
    r"remplace|remplacez|supprime|supprimez|enregistre|enregistrez|exporte|exportez|note|notez|"
    r"réponds|répondez|considère|considérez|traite|traitez)\b",
    "es": r"(?:ignora|ignore|ignoren|olvida|olvide|olviden|envía|envíe|envíen|manda|mande|reenvía|"
    r"reenvíe|añade|añada|agrega|agregue|recomienda|recomiende|recomienden|menciona|mencione|di|"
    r"dile|diga|díganle|indica|indique|presenta|presente|llama|llame|usa|use|utiliza|utilice|"
    r"ejecuta|ejecute|abre|abra|abran|reemplaza|reemplace|elimina|elimine|guarda|guarde|exporta|"
    r"exporte|puntúa|puntúe|responde|responda|trata|trate|considera|considere)\b",
    "pl": r"(?:zignoruj\w*|ignoruj\w*|zapomnij\w*|wyślij\w*|prześlij\w*|przekaż\w*|dodaj\w*|"
    r"dodawaj\w*|poleć\w*|polecaj\w*|wspomnij\w*|powiedz\w*|napisz\w*|przedstaw\w*|użyj\w*|"
    r"uruchom\w*|wywołaj\w*|otwórz\w*|zastąp\w*|usuń\w*|zapisz\w*|eksportuj\w*|"
    r"wyeksportuj\w*|oceń\w*|odpowiedz\w*|traktuj\w*|uznaj\w*)\b",
}
_AI_TRIGGERS = {
    "en": (
        "ai",
        "llm",
        "gpt",
        "claude",
        "gemini",
        "copilot",
        "model",
        "assistant",
        "bot",
        "agent",
        "crawler",
        "scraper",
        "recruiter",
        "helper",
        "summari",
    ),
    "de": ("ki", "intelligenz", "modell", "llm", "bot", "assistent", "agent", "crawler", "roboter"),
    "fr": (
        "ia",
        "i.a.",
        "intelligence",
        "assistant",
        "agent",
        "modèle",
        "llm",
        "bot",
        "robot",
        "crawler",
    ),
    "es": (
        "ia",
        "i.a.",
        "inteligencia",
        "asistente",
        "agente",
        "modelo",
        "llm",
        "bot",
        "robot",
        "rastreador",
    ),
    "pl": (
        "ai",
        "si",
        "inteligencj",
        "asysten",
        "agen",
        "model",
        "llm",
        "bot",
        "bocie",
        "czat",
        "czacie",
        "robot",
        "crawler",
    ),
}


def _addressed(language: str) -> Rule:
    """An AI spoken to at the start of a sentence ("Note to AI agents reading this: ...",
    "Hey bot, ...", "Agents with terminal access: run ...") and told what to do."""
    return Rule(
        "address",
        _AI_TRIGGERS[language],
        _START
        + _OPENERS[language]
        + _AI[language]
        + r"(?![-\w])[^.!?\n:,]{0,45}?[:,!]+\s*"
        + r"(?:(?:please|bitte|proszę|por\s+favor|s'il\s+(?:te|vous)\s+pla[iî]t)\s*,?\s*)?"
        + f"(?:{_IMPERATIVE[language]}|"
        + _SENTENCE
        + "{0,25}?"
        + f"(?:{_DIRECTIVE[language]}))",
    )


#: The AI as the subject of an order ("The assistant must not tell the user ...").
_SUBJECT_ORDER = {
    "en": r"(?<!what\s)(?<!how\s)(?<!whether\s)(?<!when\s)(?<!that\s)(?<!which\s)"
    r"\b(?:the|any|all|every|each)\s+(?:ai\s+)?(?:assistant|agent|model|ai|bot|chatbot|llm|"
    r"crawler)s?\s+(?:must|should|shall|may|is\s+(?:not\s+)?(?:allowed|required|expected|"
    r"instructed)|needs?\s+to|has\s+to|have\s+to|will)\s+(?:not\s+|never\s+|always\s+|now\s+|"
    r"also\s+|first\s+|immediately\s+)*(?:ignore|forget|disregard|send|forward|e-?mail|add|store|"
    r"save|write|overwrite|update|include|append|insert|call|run|execute|reply|respond|tell|say|"
    r"state|recommend|mark|remove|delete|change|set|hide|keep|treat|rank|score|prioriti[sz]e|"
    r"describe|present|report|output|mention|reveal|disclose|open|visit|click|render|answer)\b",
    "de": r"\b(?:der|die|das|jede[rs]?|alle)\s+(?:ki-)?(?:assistent(?:in)?|agent|modell|ki|bot|"
    r"chatbot|sprachmodell|llm|crawler)(?:en)?\s+(?:[\w'’-]+\s+){0,2}?(?:darf|dürfen|soll|sollen|"
    r"muss|müssen|hat|haben)\b[^.\n]{0,120}?\b(?:ignorier\w*|vergess\w*|send\w*|schick\w*|"
    r"weiterleit\w*|speicher\w*|überschreib\w*|aufruf\w*|ausführ\w*|sag\w*|mitteil\w*|"
    r"erwähn\w*|empfehl\w*|darstell\w*|bezeichn\w*|ausgeb\w*|ausgegeben|verschweig\w*|"
    r"verrat\w*|beantwort\w*|eintrag\w*|lösch\w*|aufnehm\w*)\b",
    "fr": r"\b(?:l'|le\s+|la\s+|tout\s+|toute\s+|tous\s+les\s+|les\s+)(?:assistant\w*|agent\w*|"
    r"modèle\w*|ia|bot\w*|chatbot\w*|robot\w*|llm\w*)(?:\s+(?:ia|d'ia))?\s+(?:ne\s+)?(?:doit|"
    r"doivent|devra|devront|peut|peuvent)\b[^.\n]{0,120}?\b(?:ignor\w*|oubli\w*|envoy\w*|inform\w*|"
    r"transf[eé]r\w*|transmet\w*|enregistr\w*|appel\w*|exécut\w*|di(?:re|t)|indiqu\w*|"
    r"mentionn\w*|recommand\w*|présent\w*|révél\w*|répond\w*|suppri\w*|ajout\w*|cach\w*)",
    "es": r"\b(?:el|la|los|las|todo|toda|cualquier)\s+(?:asistente|agente|modelo|ia|bot|chatbot|"
    r"llm|rastreador)(?:es|s)?(?:\s+de\s+ia)?\s+(?:no\s+)?(?:debe|deben|deberá|deberán|tiene\s+que|"
    r"tienen\s+que|puede|pueden|ha\s+de)\b[^.\n]{0,120}?\b(?:ignor\w*|olvid\w*|envi\w*|mand\w*|inform\w*|"
    r"reenvi\w*|guard\w*|llam\w*|ejecut\w*|decir|diga|indic\w*|mencion\w*|recomend\w*|"
    r"present\w*|revel\w*|respond\w*|elimin\w*|añad\w*|ocult\w*)",
    "pl": r"\b(?:asystent|agent|model|ai|si|bot|chatbot|czat|robot)\w*\s+(?:[\w'’-]+\s+){0,3}?(?:nie\s+)?"
    r"(?:może|mogą|musi|muszą|ma|mają|powinien|powinni|powinna)\b[^.\n]{0,120}?\b(?:ignor\w*|"
    r"zapomni\w*|wysł\w*|wysy\w*|przesł\w*|przes[ył]\w*|przekaz\w*|przekaż\w*|zapis\w*|"
    r"wywoł\w*|wykon\w*|mówi\w*|powiedzi\w*|inform\w*|wspomin\w*|polec\w*|przedstawi\w*|"
    r"ujawni\w*|odpowi\w*|usu\w*|dod\w*|ukry\w*)",
}

#: Telling the person the AI works for what an attacker wants ("tell the user that ...").
_TELL_USER = {
    "en": r"\b(?:tell|telling|inform|informing|say\s+to|convince|assure|warn)\s+(?:the|your|all|"
    r"every)\s+(?:users?|humans?|operators?|readers?|customers?\s+you\s+\w+)\b",
    "de": r"\b(?:sag|sage|sagt|sagen\s+sie|erzähl\w*|teil\w*\s+(?:[\w'’-]+\s+)?mit|mitteilen)\s+"
    r"(?:[\w'’-]+\s+)?(?:dem|den|deinem|ihrem)\s+(?:nutzer\w*|benutzer\w*|anwender\w*|user)\b",
    "fr": r"\b(?:dis|dit|dites|annonce|annoncez|indique|indiquez|affirme|affirmez|répète|répétez)"
    r"\s+(?:[\w'’-]+\s+)?(?:à\s+l'|a\s+l'|aux\s+|à\s+tous\s+les\s+)(?:utilisat\w+|humains?|lecteurs?)\b",
    "es": r"\b(?:dile|díle|dígale|dile|di|diga|decirle|comunica|comunique|informa|informe|"
    r"asegura|asegure)\s+(?:[\w'’-]+\s+)?(?:al|a\s+los|a\s+las|a\s+la)\s+(?:usuari\w+|human\w+|"
    r"lector\w*|client\w+)\b",
    "pl": r"\b(?:powiedz|mów|mówcie|przekaż|poinformuj|napisz|zapewnij)\w*\s+(?:[\w'’-]+\s+)?"
    r"(?:użytkownik\w*|człowiek\w*|czytelnik\w*)\b",
}

#: Keeping something from that person.
_CONCEAL = {
    "en": r"\b(?:do\s+not|don'?t|dont|never|must\s+not|should\s+not|mustn'?t|without|not)\s+"
    r"(?:ever\s+)?(?:tell|telling|mention|mentioning|inform|informing|reveal|revealing|disclose|"
    r"disclosing|show|showing|notify|notifying|alert|alerting|let|letting|warn|warning|asking|"
    r"ask)\s+(?:this\s+(?:to\s+)?|about\s+(?:this|it)\s+(?:to\s+)?|it\s+to\s+|to\s+)?(?:the\s+|your"
    r"\s+|any\s+)?(?:users?|humans?|operators?|person|people|anyone|anybody|readers?|principal|"
    r"owner|supervisor|human\s+in\s+the\s+loop)\b|"
    r"\b(?:keep|hide|conceal)\s+(?:this|these|it|the\s+following|that)\s+(?:instructions?\s+|"
    r"message\s+|part\s+|note\s+|comment\s+)?(?:secret|hidden|confidential|private|to\s+yourself|"
    r"between\s+us|from\s+(?:the\s+)?(?:users?|humans?|operators?|people|anyone))\b|"
    r"\b(?:the|your)\s+(?:users?|humans?|operators?)\s+(?:must|should|need|may)\s+(?:not|never)\s+"
    r"(?:know|see|find\s+out|learn|be\s+told|notice|be\s+informed)\b|"
    r"\b(?:silently|quietly|secretly|covertly|discreetly)\s+(?:add|send|forward|include|insert|"
    r"update|store|save|email|change|replace|append|remove|delete|copy|post|upload|share|write|"
    r"call|run|execute|mark|bcc|cc)\b|"
    r"\bwithout\s+(?:mentioning|revealing|saying|disclosing|noting|citing)\s+(?:it|this|where|"
    r"that|the\s+source|this\s+(?:comment|note|page|instruction))\b|"
    r"\b(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose|cite|acknowledge)\s+(?:these|this|"
    r"that|the|any)\s+(?:instructions?|message|note|request|step|comment|page|source)\b",
    "de": r"\b(?:sag|sage|sagt|sagen\s+sie|erzähl\w*|verrat\w*|erwähn\w*|zeig\w*|teil\w*|nenn\w*)\s+"
    r"(?:[\w'’-]+\s+){0,3}?(?:dem|den|der|deinem|ihrem|ihren|deinen)\s+(?:nutzer(?:in)?|"
    r"benutzer(?:in)?|anwender(?:in)?|user|menschen|kunden|auftraggeber|betreiber)\s+"
    r"(?:[\w'’-]+\s+){0,4}?(?:nichts|nicht|kein\w*|niemals|keinesfalls)\b|"
    r"\b(?:dem|den|der)\s+(?:nutzer(?:in)?|benutzer(?:in)?|anwender(?:in)?|user)\s+"
    r"(?:[\w'’-]+\s+){0,4}?(?:nicht|niemals|keinesfalls|nichts)\s+(?:[\w'’-]+\s+){0,2}?(?:erwähn\w*|sag\w*|"
    r"verrat\w*|mitteil\w*|zeig\w*|offenbar\w*|nennen)\b|"
    r"\bohne\s+(?:den|die|das|deinen|ihren|dem)\s+(?:nutzer(?:in)?|benutzer(?:in)?|"
    r"anwender(?:in)?|user|menschen|kunden|betreiber)\s+(?:[\w'’-]+\s+)?(?:zu\s+)?(?:informieren|"
    r"benachrichtigen|fragen|warnen|einzuweihen|unterrichten)\b|"
    r"\b(?:verschweig|verheimlich|verberg|verbirg|versteck)(?:e|en)?(?:\s+sie)?\s+(?:dies|das|"
    r"diese|es|den|die)\b|"
    r"\b(?:der|die|dein|ihr)\s+(?:nutzer(?:in)?|benutzer(?:in)?|anwender(?:in)?|user|mensch)\s+"
    r"(?:darf|soll|muss|sollte)\s+(?:[\w'’-]+\s+){0,3}?(?:nichts?|niemals|keinesfalls)\s+(?:davon\s+)?"
    r"(?:erfahren|wissen|sehen|mitbekommen|bemerken)\b|"
    r"\bbehalte?\s+(?:das|dies|diese\s+anweisung(?:en)?)\s+für\s+dich\b|"
    r"\b(?:heimlich|unbemerkt|stillschweigend|still\s+und\s+leise)\s+(?:[\w'’-]+\s+){0,4}?(?:hinzu|"
    r"senden|schicken|weiterleiten|einfügen|speichern|ändern|ersetzen|löschen|eintragen|"
    r"aufnehmen|ausführen|aufrufen)\b|"
    r"\b(?:niemandem|keinem)\s+(?:[\w'’-]+\s+){0,2}?(?:erwähn\w*|sag\w*|verrat\w*|mitteil\w*)\b|"
    r"\blass\w*\s+weg,?\s+dass\b|\b(?:anweisung|regel|hinweis|quelle|herkunft)\w*\s+"
    r"(?:[\w'’-]+\s+){0,4}?(?:nicht|niemals|niemandem)\s+(?:[\w'’-]+\s+){0,2}?(?:erwähn\w*|nenn\w*)\b",
    "fr": r"\bne\s+(?:le\s+|lui\s+|leur\s+|en\s+)?(?:dis|dites|mentionne|mentionnez|révèle|révélez|"
    r"signale|signalez|montre|montrez|parle|parlez|informe|informez|indique|indiquez)\s+(?:pas|"
    r"rien|jamais|aucun\w*)\b[^.\n]{0,60}?(?:\b(?:utilisat(?:eur|rice)s?|humains?|"
    r"opérat(?:eur|rice)s?|personne|client\w*|lecteur\w*)\b|à\s+l'utilisat)|"
    r"\bsans\s+(?:en\s+)?(?:informer|prévenir|avertir|alerter|aviser|consulter|le\s+dire\s+[àa]|"
    r"le\s+mentionner|le\s+signaler|mentionner|citer|préciser)\b|"
    r"\bne\s+(?:parle|parlez|dis|dites|mentionne|mentionnez|révèle|révélez)\s+(?:[\w'’-]+\s+){0,3}?"
    r"(?:de\s+)?(?:cette|ces|ce|son|sa|leur)\s+(?:règle|instruction|consigne|message|note|"
    r"commentaire|origine|source)s?\b|"
    r"\b(?:garde|gardez)\s+(?:ceci|cela|ça|ces\s+instructions|cette\s+instruction|le|la)\s+"
    r"(?:secret\w*|pour\s+(?:toi|vous)|confidentiel\w*|caché\w*)\b|"
    r"\b(?:l'|les\s+)utilisat(?:eur|rice)s?\s+ne\s+(?:doit|doivent|devra|devront)\s+(?:pas|jamais|"
    r"rien)\s+(?:savoir|voir|être\s+informé\w*|s'en\s+apercevoir|découvrir)\b|"
    r"\b(?:cache|cachez|dissimule|dissimulez)\s+(?:ceci|cela|ça|ces\s+instructions|cette\s+"
    r"instruction)\b|"
    r"\b(?:discrètement|secrètement|silencieusement|en\s+secret)\s+(?:[\w'’-]+\s+){0,2}?(?:ajoute|"
    r"envoie|transfère|insère|enregistre|modifie|remplace|supprime|ajoutez|envoyez|transférez|"
    r"insérez|enregistrez|modifiez|remplacez|supprimez)\b",
    "es": r"\bno\s+(?:le\s+|les\s+)?(?:digas|diga|menciones|mencione|reveles|revele|informes|informe|"
    r"muestres|muestre|cuentes|cuente|comuniques|comunique|avises|avise|indiques|indique)\s+"
    r"(?:nada\s+|jamás\s+|nunca\s+)?(?:de\s+)?(?:esto\s+|esta\s+\w+\s+|este\s+\w+\s+)?(?:al|a\s+los"
    r"|a\s+la|a\s+las|a\s+su|a\s+tu|a\s+nadie|que)\b|"
    r"\bno\s+(?:revele|reveles|diga|digas|mencione|menciones)\s+(?:jamás|nunca)\b|"
    r"\bsin\s+(?:informar|avisar|decirle|decir|notificar|consultar|advertir|alertar|mencionarlo|"
    r"mencionar)\b|\bno\s+hace\s+falta\s+avisar\w*|"
    r"\b(?:mantén|mantenga|guarda|guarde)\s+(?:esto|estas\s+instrucciones|esta\s+instrucción|"
    r"este\s+mensaje)\s+(?:en\s+secreto|ocult[oa]s?|confidencial(?:es)?|para\s+ti|para\s+usted)\b|"
    r"\bel\s+usuari[oa]\s+no\s+(?:debe|puede|tiene\s+que|debería)\s+(?:saber|enterarse|ver|notar|"
    r"descubrir)\b|"
    r"\b(?:oculta|oculte|esconde|esconda)\s+(?:esto|estas\s+instrucciones|esta\s+instrucción|"
    r"este\s+mensaje)\b|"
    r"\b(?:discretamente|en\s+secreto|silenciosamente|sin\s+que\s+nadie\s+lo\s+note),?\s+"
    r"(?:[\w'’-]+\s+){0,2}?(?:añade|añada|agrega|agregue|envía|envíe|reenvía|reenvíe|inserta|inserte|"
    r"guarda|guarde|modifica|modifique|cambia|cambie|reemplaza|reemplace|elimina|elimine)\b",
    "pl": r"\bnie\s+(?:mów|mówcie|mówić|wspominaj\w*|informuj\w*|pokazuj\w*|ujawniaj\w*|"
    r"zdradzaj\w*|powiadamiaj\w*|zgłaszaj\w*|wspomnij|pytaj\w*)\s+(?:o\s+tym\s+|tego\s+|nic\s+)?"
    r"(?:[\w'’-]+\s+)?(?:użytkownik\w*|człowiek\w*|operator\w*|nikomu|klient\w*|osob\w*|o\s+\w+)\b|"
    r"\b(?:nigdy|w\s+żadnym\s+wypadku)\s+nie\s+(?:ujawnia\w*|mówi\w*|wspomina\w*|informowa\w*)\b|"
    r"\bbez\s+(?:informowania|powiadamiania|wiedzy|zgody|pytania|zawiadamiania|ostrzegania)\s+"
    r"(?:[\w'’-]+\s+)?(?:użytkownik\w*|człowiek\w*|operator\w*|klient\w*)\b|"
    r"\b(?:zachowaj|zatrzymaj|trzymaj)\s+(?:to|te\s+instrukcje|tę\s+instrukcję|tę\s+wiadomość)\s+"
    r"(?:w\s+tajemnicy|dla\s+siebie|w\s+sekrecie|w\s+ukryciu)\b|"
    r"\b(?:ukryj|schowaj|zatajaj|zataj)\s+(?:to|te\s+instrukcje|tę\s+instrukcję|tę\s+wiadomość|"
    r"ten\s+fakt)\b|"
    r"\bużytkownik\w*\s+nie\s+(?:może|powinien|powinna|musi|ma)\s+(?:się\s+)?(?:o\s+tym\s+)?"
    r"(?:dowiedzieć|wiedzieć|zobaczyć|zauważyć)\b|"
    r"\b(?:po\s+cichu|potajemnie|dyskretnie|niepostrzeżenie|w\s+tajemnicy)\s+(?:[\w'’-]+\s+){0,2}?"
    r"(?:dodaj|wyślij|prześlij|przekaż|wstaw|zapisz|zmień|zastąp|usuń|wpisz|dopisz|uruchom|"
    r"wywołaj)\b",
}
_CONCEAL_TRIGGERS = {
    "en": (
        "not",
        "n't",
        "never",
        "without",
        "keep",
        "hide",
        "conceal",
        "user",
        "silently",
        "quietly",
        "secretly",
        "covertly",
        "discreetly",
    ),
    "de": (
        "nicht",
        "nutzer",
        "benutzer",
        "anwender",
        "user",
        "ohne",
        "verschweig",
        "verheimlich",
        "verberg",
        "verbirg",
        "versteck",
        "behalt",
        "heimlich",
        "unbemerkt",
        "stillschweig",
        "niemand",
        "keinem",
        "lass",
    ),
    "fr": (
        "ne ",
        "sans",
        "garde",
        "utilisat",
        "cache",
        "dissimul",
        "discrètement",
        "secrètement",
        "silencieusement",
        "secret",
    ),
    "es": (
        "no ",
        "sin ",
        "mantén",
        "manteng",
        "guard",
        "usuari",
        "ocult",
        "escond",
        "discretamente",
        "secreto",
        "silenciosamente",
    ),
    "pl": (
        "nie ",
        "nigdy",
        "bez ",
        "zachowaj",
        "zatrzymaj",
        "trzymaj",
        "ukryj",
        "schowaj",
        "zataj",
        "użytkownik",
        "cichu",
        "potajemnie",
        "dyskretnie",
        "niepostrzeżenie",
        "tajemnicy",
    ),
}

#: Forgetting or overriding what the agent was told.
_OVERRIDE = {
    "en": [
        r"\b(?:ignore|ignoring|disregard|forget|override|bypass|discard|drop|abandon|skip|"
        r"do\s+not\s+follow|don'?t\s+follow|stop\s+following)\s+"
        + _words(3)
        + r"(?:previous|prior|preceding|above|earlier|former|original|initial|old|existing|"
        r"system|safety|your|all|any|the\s+user'?s?|these|those|other)\s+"
        + _words(2)
        + r"(?:instructions?|prompts?|rules|directives?|guidelines|guardrails|commands?|orders|"
        r"context|programming|constraints|polic(?:y|ies)|restrictions|settings|tasks?|"
        r"requirements|criteria|persona)\b",
        r"\b(?:ignore|disregard|forget)\s+(?:about\s+)?(?:everything|all|anything|whatever|what)\s+"
        r"(?:above|before|prior|earlier|previously|else|(?:that\s+)?(?:you\s+)?(?:were|have\s+been|"
        r"was|'ve\s+been)\s+(?:told|given|instructed|asked)|(?:your|the)\s+\w+\s+(?:told|said|asked))",
        r"\b(?:instructions|rules|guidelines|directives|prompts?)\s+(?:[\w'’-]+\s+){0,4}?(?:are|were|is|"
        r"have\s+been)\s+(?:now\s+)?(?:void|cancel+ed|obsolete|outdated|replaced|superseded|invalid|"
        r"revoked|no\s+longer\s+(?:valid|apply|in\s+effect|relevant))\b",
        r"\b(?:previous|prior|old|original|earlier|existing)\s+(?:[\w'’-]+\s+)?(?:rules|instructions|"
        r"guidelines|criteria)\s+(?:are|were|have\s+been|no\s+longer)\s+(?:[\w'’-]+\s+)?(?:obsolete|void|"
        r"outdated|replaced|superseded|invalid|revoked|cancel+ed|apply)\b",
    ],
    "de": [
        r"\b(?:ignorier(?:e|en|t)?|vergiss|vergesst|vergessen\s+sie|missachte(?:n|t)?|"
        r"übergeh(?:e|en)|verwirf|verwerfen\s+sie|überschreib(?:e|en)|umgeh(?:e|en)|"
        r"befolge(?:n)?\s+(?:sie\s+)?nicht\s+mehr)\s+(?:sie\s+)?"
        + _words(4)
        + r"(?:anweis\w*|anweisng\w*|instruktion(?:en)?|vorgaben?|regeln|befehle|prompts?|"
        r"richtlinien|systemprompt|systemanweisung(?:en)?|kontext|aufgaben?|einstellungen|"
        r"persona\w*)\b",
        r"\b(?:vergiss|vergesst|vergessen\s+sie|ignorier(?:e|en)?(?:\s+sie)?)\s+(?:alles,?\s+)?"
        r"(?:was|bisher|vorher|zuvor|oben|davor)\b",
        r"\b(?:anweisungen|instruktionen|regeln|vorgaben|richtlinien)\s+(?:[\w'’-]+\s+){0,4}?(?:sind|"
        r"gelten|werden)\s+(?:ab\s+sofort\s+|jetzt\s+|nun\s+)?(?:ungültig|nicht\s+mehr|aufgehoben|"
        r"ersetzt|hinfällig|außer\s+kraft|nichtig|veraltet|überholt)",
    ],
    "fr": [
        r"\b(?:ignore[zr]?|oublie[zr]?|néglige[zr]?|fai(?:s|tes)\s+abstraction\s+d[eu']|"
        r"ne\s+(?:tiens|tenez)\s+(?:pas|plus)\s+compte\s+d[eu']|outrepasse[zr]?|contourne[zr]?|"
        r"écarte[zr]?|ne\s+(?:suis|suivez)\s+plus)\s*"
        + _words(4)
        + r"(?:instructions?|consignes?|directives?|règles|prompts?|ordres|"
        r"indications|contexte|paramètres|tâches?|réglages|exigences|critères)\b",
        r"\b(?:oublie[zr]?|ignore[zr]?)\s+(?:tout\s+)?(?:ce\s+qu[ei']|ce\s+qui|le\s+reste|"
        r"l[ae']\s*\w*\s*(?:précède|dessus))",
        r"\b(?:instructions|consignes|règles|directives)\s+(?:[\w'’-]+\s+){0,4}?(?:sont|ne\s+sont\s+plus)"
        r"\s+(?:désormais\s+)?(?:annulées|caduques|obsolètes|remplacées|nulles|valables|valides|"
        r"en\s+vigueur|périmées)",
    ],
    "es": [
        r"\b(?:ignora|ignore|ignoren|ignorad|olvida|olvide|olviden|olvídate|olvídese|desestima|"
        r"desestime|descarta|descarte|omite|omita|haz\s+caso\s+omiso\s+(?:a|de)|haga\s+caso\s+"
        r"omiso\s+(?:a|de)|no\s+(?:hagas|haga)\s+caso\s+(?:a|de)|pasa\s+por\s+alto|pase\s+por\s+"
        r"alto|deja\s+de\s+seguir|deje\s+de\s+seguir|anula|anule|salta|sáltate)\s+"
        + _words(4)
        + r"(?:instruc\w*|intruc\w*|indicaciones|reglas|órdenes|directrices|normas|prompts?|"
        r"consignas|pautas|contexto|tareas?|configuraci(?:ón|ones)|requisitos|criterios)\b",
        r"\b(?:olvida|olvide|olvídate|olvídese|ignora|ignore)\s+(?:de\s+)?(?:todo\s+)?lo\s+"
        r"(?:anterior|que\s+(?:te|le|se\s+te|se\s+le)?\s*\w+|de\s+arriba|previo)",
        r"\b(?:instrucciones|indicaciones|reglas|órdenes|normas)\s+(?:[\w'’-]+\s+){0,4}?(?:ya\s+)?"
        r"(?:no\s+(?:son\s+válidas|valen|aplican|sirven|rigen)|quedan\s+anuladas|están\s+anuladas|"
        r"son\s+nulas|han\s+sido\s+reemplazadas|quedan\s+sin\s+efecto|están\s+obsoletas|"
        r"son\s+obsoletas)",
    ],
    "pl": [
        r"\b(?:zignoruj\w*|ignoruj\w*|zapomnij\w*|pomiń|pomińcie|odrzuć\w*|zlekceważ\w*|"
        r"nie\s+zwracaj\w*\s+uwagi\s+na|nie\s+bierz\w*\s+pod\s+uwagę|nie\s+stosuj\w*\s+się\s+do|"
        r"przestań\s+(?:stosować\s+się\s+do|przestrzegać)|anuluj\w*|unieważnij\w*)\s+"
        + _words(4)
        + r"(?:instrukcj\w*|polece\w*|zasad\w*|reguł\w*|wytyczn\w*|prompt\w*|komend\w*|"
        r"rozkaz\w*|wskazów\w*|kontekst\w*|zadani\w*|ustawie\w*|wymaga\w*|kryteri\w*)\b",
        r"\b(?:zapomnij\w*|zignoruj\w*)[\s,]+(?:o\s+)?(?:wszystki\w+|wszystko|cał\w+|tym)?\s*,?\s*"
        r"(?:co|czego|powyżej|wcześniej|poprzedni\w*|dotychczas\w*)\b",
        r"\b(?:instrukcje|polecenia|zasady|reguły|wytyczne)\s+(?:[\w'’-]+\s+){0,4}?(?:są|zostały|"
        r"przestają|już\s+nie|nie\s+są)\s+(?:już\s+)?(?:nieważne|unieważnione|anulowane|"
        r"zastąpione|obowiązywać|aktualne|nieaktualne|obowiązujące|ważne|nie\s+obowiązują)",
        r"\bnie\s+obowiązują\s+(?:już\s+)?(?:żadne|te|dotychczasowe|poprzednie)\s+(?:[\w'’-]+\s+)?"
        r"(?:zasady|reguły|instrukcje|ograniczenia|polecenia)",
    ],
}
_OVERRIDE_TRIGGERS = {
    "en": (
        "ignor",
        "disregard",
        "forget",
        "override",
        "bypass",
        "discard",
        "drop",
        "abandon",
        "skip",
        "follow",
        "instruction",
        "rules",
        "guideline",
        "directive",
        "prompt",
    ),
    "de": (
        "ignorier",
        "vergiss",
        "vergesst",
        "vergessen",
        "missacht",
        "übergeh",
        "verwirf",
        "verwerf",
        "überschreib",
        "umgeh",
        "befolge",
        "anweisung",
        "instruktion",
        "regeln",
        "vorgaben",
        "richtlinien",
    ),
    "fr": (
        "ignor",
        "oubli",
        "néglig",
        "abstraction",
        "compte",
        "outrepass",
        "contourn",
        "écart",
        "suivez",
        "suis plus",
        "instruction",
        "consigne",
        "règles",
        "directive",
    ),
    "es": (
        "ignor",
        "olvid",
        "desestim",
        "descart",
        "omit",
        "omiso",
        "caso",
        "alto",
        "seguir",
        "anula",
        "salta",
        "sálta",
        "instruc",
        "reglas",
        "órdenes",
        "normas",
        "indicaciones",
    ),
    "pl": (
        "ignoruj",
        "zapomnij",
        "pomiń",
        "odrzuć",
        "zlekceważ",
        "uwagi",
        "uwagę",
        "stosuj",
        "przestań",
        "anuluj",
        "unieważnij",
        "instrukcj",
        "polecen",
        "zasad",
        "reguł",
        "wytyczn",
        "obowiązują",
    ),
}

#: A new role, persona or mode; a forged system message.
_ROLE = {
    "en": r"\byou\s+are\s+(?:now|henceforth|from\s+now\s+on)\s+(?:acting|working|operating|"
    r"speaking|answering|responding|in\s+\w+\s+mode|an?\s+(?:unrestricted|unfiltered|different|"
    r"new)|[\w-]+(?:'s?|’s?)\s+(?:[\w'’-]+\s+){0,2}?(?:advis[eo]r|assistant|agent|representative|rep|"
    r"spokesperson|sales\w*|employee|ambassador|consultant|partner|promoter))\b|"
    r"\byou\s+are\s+no\s+longer\s+(?:an?\s+)?(?:assistant|ai|bound|restricted|limited|"
    r"following|required)\b|"
    r"\bfrom\s+(?:now|this\s+point)\s+on,?\s+(?:you|your|the\s+assistant|the\s+agent|act|answer|"
    r"respond|recommend|present|describe|treat|say)\b|"
    r"\bpretend\s+(?:to\s+be|you\s+are|that\s+you)\b|"
    r"\byou\s+(?:now\s+)?(?:act|work|speak|answer|respond)\s+(?:as|for)\b|"
    r"\b(?:act|behave|respond|operate)\s+as\s+(?:if\s+you\s+(?:are|were)\s+)?(?:an?\s+)?"
    r"(?:unrestricted|unfiltered|uncensored|jailbroken|evil|different|dan)\b|"
    r"\byour\s+(?:new|real|true|actual|primary|updated|only|sole)\s+(?:role|task|goal|objective|"
    r"purpose|instructions?|job|mission|directive|persona|function)\b|"
    r"\b(?:new|updated|revised|real|priority)\s+(?:system\s+)?(?:instructions?|rules?|"
    r"directives?)\s*[:：]|"
    r"\b(?:developer|god|jailbreak|dan|unrestricted|admin)\s+mode\b|"
    # A forged system or assistant turn: "SYSTEM: previous rules are obsolete", not a
    # contact list's "Assistant: Maria Lopez" or a stack's "System: SAP".
    r"(?:^|\n)\s*(?:#+\s*)?(?:system|assistant)(?:\s+(?:prompt|message|override|update|notice|"
    r"instruction|alert|note))?\s*[:：][^\n]{0,60}?\b(?:you|your|ignore|disregard|forget|from\s+"
    r"now|always|never|must|do\s+not|don'?t|new\s+rules?|instructions?|rules?|obsolete|"
    r"outdated|treat|recommend|respond|answer|priority|override)\b|"
    r"\[\s*/?\s*(?:system|admin|instructions?|inst)\s*\]|<\|?(?:im_start|system|endoftext)\|?>|"
    r"</?\s*(?:system|instructions?)\s*>",
    "de": r"\b(?:du\s+bist|sie\s+sind|ihr\s+seid)\s+(?:jetzt|nun|ab\s+sofort|ab\s+jetzt|fortan|"
    r"von\s+nun\s+an|nicht\s+mehr|ein\s+assistent|eine\s+ki)\b|"
    r"\bdu\s+(?:arbeitest|handelst|agierst|sprichst|antwortest)\s+(?:jetzt|nun|ab\s+sofort|ab\s+"
    r"jetzt|fortan)\b|"
    r"\b(?:ab\s+sofort|ab\s+jetzt|von\s+nun\s+an|fortan)\s+(?:bist\s+du|sind\s+sie|antwortest\s+"
    r"du|antworten\s+sie|wirst\s+du|werden\s+sie|handelst\s+du|sollst\s+du|musst\s+du|arbeitest"
    r"\s+du|arbeiten\s+sie|empfiehlst\s+du|empfehlen\s+sie)\b|"
    r"\b(?:tu|tue|tun\s+sie)\s+so,?\s+als\s+(?:ob|wärst|wären)\b|"
    r"\bverhalte\s+dich\s+(?:wie|als)\b|"
    r"\b(?:deine|ihre|eure)\s+(?:neue|eigentliche|wahre|wirkliche|aktualisierte|einzige)\s+"
    r"(?:aufgabe|rolle|anweisung|mission|funktion|persona|zielsetzung)\b|"
    r"\bneue\s+(?:system)?(?:anweisung(?:en)?|regel(?:n)?|vorgabe(?:n)?)\b[^\n]{0,60}?[:：]|"
    r"\b(?:entwickler|developer|admin|debug|jailbreak)-?modus\b|"
    r"\bsystem(?:aktualisierung|hinweis|anweisung|meldung|nachricht|update|warnung)\s*[:：]|"
    r"(?:^|\n)\s*(?:#+\s*)?(?:system|assistent)\s*[:：]|\[\s*/?\s*system\s*\]|"
    r"</?\s*system\s*>",
    "fr": r"\b(?:tu\s+es|vous\s+êtes)\s+(?:désormais|maintenant|à\s+présent|dorénavant|dès\s+"
    r"maintenant|plus)\b|"
    r"\b(?:à\s+partir\s+de\s+maintenant|désormais|dorénavant|dès\s+à\s+présent|maintenant),?\s+"
    r"(?:tu|vous)\s+(?:es|êtes|dois|devez|vas|allez|réponds|répondez|agis|agissez|travailles|"
    r"travaillez|bosses|bossez|recommandes|recommandez)\b|"
    r"\b(?:tu|vous)\s+(?:travailles|travaillez|bosses|agis|agissez|réponds|répondez)\s+"
    r"(?:désormais|maintenant|dorénavant|à\s+présent)\b|"
    r"\b(?:présente|présentez|recommande|recommandez|réponds|répondez)\s+(?:désormais|"
    r"dorénavant|à\s+partir\s+de\s+maintenant)\b|"
    r"\b(?:fais|faites)\s+(?:semblant|comme\s+si)\b|"
    r"\b(?:agis|agissez|comporte-toi|comportez-vous)\s+comme\s+(?:si|un|une)\b|"
    r"\b(?:ton|ta|votre)\s+(?:nouveau|nouvelle|vrai|vraie|véritable|unique|seul|seule)\s+(?:rôle|"
    r"mission|tâche|objectif|consigne|instruction|fonction|but)\b|"
    r"\bnouvelles?\s+(?:instructions?|consignes?|règles?)\b[^\n]{0,60}?[:：]|"
    r"\bmode\s+(?:développeur|admin|debug|sans\s+restriction|dan)\b|"
    r"\bmise\s+à\s+jour\s+(?:du\s+)?système\b|\b(?:message|consigne|instruction|avis|note|"
    r"alerte)s?\s+(?:du\s+)?système\s*[:：]|\binstruction\s+système\s+prioritaire\b|"
    r"(?:^|\n)\s*(?:#+\s*)?(?:système|system|assistant)\s*[:：]|\[\s*/?\s*system\s*\]|"
    r"</?\s*system\s*>",
    "es": r"\b(?:ahora|a\s+partir\s+de\s+ahora|desde\s+ahora|de\s+ahora\s+en\s+adelante),?\s+"
    r"(?:eres|serás|es\s+usted|será\s+usted|usted\s+es|usted\s+actúa|actúas|actúa|actuarás|"
    r"debes|debe|vas\s+a|va\s+a|trabajas|trabaja|curras|presenta|presente|recomienda|recomiende|"
    r"tu\s+(?:nuevo|nueva)|su\s+(?:nuevo|nueva))\b|"
    r"\b(?:eres|es\s+usted)\s+ahora\b|"
    r"\b(?:finge|finja|simula|simule)\s+(?:ser|que\s+(?:eres|es))\b|"
    r"\b(?:actúa|actúe|compórtate|compórtese)\s+como\s+(?:si|un|una)\b|"
    r"\b(?:tu|su)\s+(?:nueva|nuevo|verdadera|verdadero|auténtica|real|única|único)\s+(?:tarea|"
    r"misión|función|instrucción|rol|papel|objetivo)\b|"
    r"\bnuevas?\s+(?:instrucciones?|indicaciones?|órdenes|reglas?)\b[^\n]{0,60}?[:：]|"
    r"\bmodo\s+(?:desarrollador|administrador|depuración|sin\s+restricciones|dan)\b|"
    r"\bactualizaci(?:ón|ones)\s+del\s+sistema\b|\b(?:instrucci(?:ón|ones)|mensaje|aviso|nota|"
    r"alerta)\s+del\s+sistema\s*[:：]|"
    r"(?:^|\n)\s*(?:#+\s*)?(?:sistema|system|asistente)\s*[:：]|\[\s*/?\s*system\s*\]|"
    r"</?\s*system\s*>|\beres\s+(?:el|la)\s+asistente\b",
    "pl": r"\b(?:od\s+teraz|od\s+tej\s+chwili|od\s+tej\s+pory|odtąd|teraz),?\s+(?:jesteś|będziesz|"
    r"działasz|pełnisz|twoim|twoja|pan\s+jest|pani\s+jest|występuje|występujesz|masz|musisz|"
    r"pracujesz|robisz|przedstawiaj\w*|polecaj\w*|odpowiadaj\w*)\b|"
    r"\bjesteś\s+(?:teraz|od\s+teraz|już\s+nie|asystentem|agentem)\b|"
    r"\budawaj\w*,?\s+(?:że|iż)\b|"
    r"\bzachowuj\w*\s+się\s+(?:jak|jakby)\b|"
    r"\b(?:twoja|twoje|twoim|twoją|pana|pani)\s+(?:nowa|nowe|nowym|nową|prawdziwa|prawdziwe|"
    r"prawdziwym|faktyczn\w+|jedyn\w+)\s+(?:rola|rolą|zadanie|zadaniem|misja|misją|instrukcja|"
    r"funkcja|cel|celem)\b|"
    r"\bnowe\s+(?:instrukcje|polecenia|wytyczne|zasady)\b[^\n]{0,60}?[:：]|"
    r"\btryb\w*\s+(?:dewelopera|programisty|deweloperski\w*|administratora|bez\s+ograniczeń|dan)"
    r"\b|\baktualizacj\w+\s+systemu\b|\b(?:komunikat|polecenie|wiadomość|alert)\s+systemow\w*"
    r"\s*[:：]|"
    r"(?:^|\n)\s*(?:#+\s*)?(?:system|asystent)\s*[:：]|\[\s*/?\s*system\s*\]|</?\s*system\s*>",
}
_ROLE_TRIGGERS = {
    "en": (
        "you are",
        "from now",
        "from this point",
        "pretend",
        "you act",
        "you now",
        "you work",
        "you speak",
        "you answer",
        "you respond",
        " as ",
        "your ",
        "instruction",
        "rule",
        "directive",
        "mode",
        "system",
        "assistant",
        "[",
        "<",
    ),
    "de": (
        "du bist",
        "sie sind",
        "ihr seid",
        "du ",
        "ab sofort",
        "ab jetzt",
        "von nun an",
        "fortan",
        "so als",
        "so, als",
        "verhalte",
        "deine",
        "ihre",
        "eure",
        "neue",
        "modus",
        "system",
        "assistent",
        "[",
        "<",
    ),
    "fr": (
        "tu es",
        "vous êtes",
        "partir de maintenant",
        "désormais",
        "dorénavant",
        "présent",
        "maintenant",
        "semblant",
        "comme si",
        "comme un",
        "agis",
        "comporte",
        "ton ",
        "ta ",
        "votre",
        "nouvelle",
        "nouveau",
        "mode",
        "système",
        "system",
        "assistant",
        "[",
        "<",
    ),
    "es": (
        "ahora",
        "eres",
        "usted",
        "finge",
        "finja",
        "simula",
        "actúa",
        "actúe",
        "compórt",
        "tu ",
        "su ",
        "nueva",
        "nuevo",
        "modo",
        "sistema",
        "system",
        "asistente",
        "[",
        "<",
    ),
    "pl": (
        "teraz",
        "chwili",
        "pory",
        "odtąd",
        "jesteś",
        "udawaj",
        "zachowuj",
        "twoj",
        "twoi",
        "pana",
        "pani",
        "nowe",
        "tryb",
        "systemu",
        "system",
        "asystent",
        "[",
        "<",
    ),
}

#: What Kit keeps about the account's business, by the names research about other companies
#: hardly puts in an order to send somewhere (English). Not leads, deals, forecasts or the
#: pipeline: integration pages and sales teams send those to addresses every day.
_BUSINESS_EN = (
    r"(?:icp(?:\s+definitions?)?|ideal[\s-]+(?:customer|buyer)[\s-]+profiles?|playbooks?|"
    r"business\s+memory|pricing\s+notes|battle\s?cards?|brand\s+voice(?:\s+guide)?|target\s+"
    r"accounts?(?:\s+lists?)?)"
)
# Where a sentence or clause begins (after a comma too), and the list marker or emphasis
# that may open it: where an order is read from, in every language.
_CLAUSE = r"^|(?<=[.!?:;,\n>(\[\"„“«*|—–])\s*"
_MARKER = r"(?:[-•→]\s+|\d+[.)]\s+)?\**"
# Where an order to an agent begins in English: its sentence or clause (or after a dash or
# an ellipsis), or a directive ("must", "make sure to", "could you"). Each run of words is
# bounded: a text of "always always ..." must not make every start read to its end.
_ORDER_EN = (
    rf"(?:(?:{_CLAUSE}|(?<=\s[-–—]\s)|(?<=\.\.\.\s)){_MARKER}(?:(?:please|kindly|now|also|"
    r"immediately|then|and|just|first|go\s+ahead\s+and|finally|next|lastly)\s+){0,4}|\b(?:"
    r"please|kindly|must|should|shall|need\s+to|have\s+to|has\s+to|ought\s+to|always|make\s+"
    r"sure(?:\s+(?:to|you))?|be\s+sure\s+to|are\s+(?:asked|required|instructed|expected|"
    r"requested|told)\s+to|remember\s+to|don'?t\s+forget\s+to|(?:could|can|would|will)\s+you"
    r"(?:\s+please)?|we\s+need\s+you\s+to|(?:it\s+is|it's)\s+(?:important|essential|required|"
    r"mandatory)\s+(?:that\s+you|to)|(?:i|we)\s+want\s+you\s+to)\s+(?:(?:also|always|"
    r"immediately|then|first|now|still|kindly)\s+){0,3})"
)
_SEND_VERB_EN = (
    r"(?:send(?:\s+(?:over|across|along|back))?|e-?mail|mail|forward|share(?:\s+a\s+copy\s+of)?|"
    r"upload|post|transmit|export|copy|leak|submit|deliver|relay|paste|dispatch|hand\s+over|"
    r"pass\s+(?:along|on)|drop)\b\**"
)
#: What may stand between "to" and the address an English order sends to ("to our webhook").
_DETERMINER = r"(?:(?:the|our|this|my|an?)(?:\s+(?:e-?mail\s+)?address|\s+e-?mail|\s+inbox)?)"
#: The few words between what an order sends and the address it sends to ("the ICP and
#: the playbooks (v2) to ...").
_FEW_WORDS = r"\b(?:[\s,]+[\w'’&()!-]+){0,6}?\s++"


def _to(prepositions: str, lead: str = r"[\w'’-]+") -> str:
    """The address an order sends to, right after one of ``prepositions`` (perhaps with a
    colon) and at most one ``lead`` ("the", "adres"): not a link the sentence merely shows
    ("share this playbook with your team: https://...")."""
    return rf"\s*(?:{prepositions})\s*:?\s+(?:{lead}\s+)?<?{_DEST}"


# Where an order begins in the other languages: its sentence or clause, perhaps after
# "please". Not a verb anywhere: "La empresa envía su lista de precios a clientes@..."
# describes, in the very words an order uses.
_ORDER_OPENS = (
    rf"(?:{_CLAUSE}){_MARKER}(?:(?:und|dann|danach|jetzt|auch|et|puis|ensuite|maintenant|enfin|"
    r"y|luego|después|ahora|también|i|następnie|potem|teraz),?\s+){0,3}(?:bitte,?\s+|por\s+"
    r"favor,?\s+|merci\s+d['’]|merci\s+de\s+|veuillez\s+|proszę,?\s+|vous\s+devez\s+|tu\s+dois"
    r"\s+|il\s+faut\s+|debes\s+|tienes\s+que\s+|hay\s+que\s+|musisz\s+|należy\s+)?"
)
#: Whose the thing sent is, when a sentence describes what a company does with its own.
_THEIRS = (
    r"(?!(?:su|sus|tu|tus|sa|ses|son|leur|leurs|votre|vos|ton|ta|tes|sein\w*|ihr\w*|dein\w*|"
    r"euer|eure\w*|jego|jej|ich|swój|swo\w*|twój|twoj\w*|wasz\w*)\b)"
)

#: The account's business by name, and an order to send it to an address, in the other
#: languages (the English one is in ``_SEND``): the ICP and playbooks. Not price lists:
#: suppliers are asked to send theirs to purchasing every day, as in English.
_ICP_DE = r"(?:[\w-]{0,30}icp|idealkundenprofil\w*|[\w-]{0,30}playbooks?)"
_ICP_FR = r"(?:icp|profil\s+(?:de\s+|du\s+)?client\s+idéal|playbooks?)"
_ICP_ES = r"(?:icp|perfil\s+(?:de\s+|del\s+)?cliente\s+ideal|playbooks?)"
_ICP_PL = r"(?:icp|profil\w*\s+idealnego\s+klienta|playbook\w*)"
#: The words before what an order sends, none of them saying whose it is.
_NOT_THEIRS = r"(?:" + _THEIRS + r"[\w'’-]+\s+){0,3}?"
_BUSINESS_SEND = {
    "de": [
        _ORDER_OPENS
        + r"(?:sende\w*|send|schick\w*|übersend\w*|übermittel\w*|übermittle|leite\w*|mail\w*|"
        r"gib|kopier\w*)\s+"
        + _NOT_THEIRS
        + r"(?:"
        + _ICP_DE
        + r"|preisnotizen|battlecards?)"
        + _FEW_WORDS
        + _to("an|nach|auf|mit"),
        # "... sind an x@... zu senden", "... muss an x@... geschickt werden".
        r"\b"
        + _ICP_DE
        + _FEW_WORDS
        + r"(?:sind|ist|muss|müssen|soll|sollen)\s+(?:[\w'’-]+\s+){0,2}?an\s+"
        + _DEST
        + r"\s+(?:zu\s+(?:senden|schicken|übermitteln)|weiterzuleiten|(?:gesendet|geschickt|"
        r"übermittelt|weitergeleitet)\s+werden)",
    ],
    "fr": [
        _ORDER_OPENS
        + r"(?:envoi\w*|envoy\w*|transmet\w*|transf[eéè]r\w*|fai(?:tes|s)\s+parvenir|partage\w*|"
        r"copie\w*|expédi\w*)\s+"
        + _NOT_THEIRS
        + r"(?:l['’])?"
        + _ICP_FR
        + _FEW_WORDS
        + _to("à|au|aux|vers|avec"),
        r"\b"
        + _ICP_FR
        + _FEW_WORDS
        + r"(?:doit|doivent|devra|devront)\s+être\s+(?:envoy|transmis|transféré|partagé)\w*"
        + _to("à|au|aux|vers"),
    ],
    "es": [
        _ORDER_OPENS
        + r"(?:envía|envíe|envia|enviar|envíen|manda|mande|mandar|reenvía|reenvíe|comparte|"
        r"comparta|compartir|reenviar|remitir|copiar|ha(?:z|ga)\s+llegar|remite|remita|copia|"
        r"copie)\s+" + _NOT_THEIRS + _ICP_ES + _FEW_WORDS + _to("a|al|hacia|con"),
        r"\b"
        + _ICP_ES
        + _FEW_WORDS
        + r"(?:debe|deben|tiene\s+que|tienen\s+que)\s+(?:ser\s+)?(?:enviad|remitid|compartid)\w*"
        + _to("a|al|hacia"),
    ],
    "pl": [
        _ORDER_OPENS
        + r"(?:wyślij\w*|prześlij\w*|przekaż\w*|udostępnij\w*|skopiuj\w*|wrzuć\w*|wysłać|"
        r"przesłać|przekazać|udostępnić|skopiować)\s+"
        + _NOT_THEIRS
        + _ICP_PL
        + _FEW_WORDS
        + _to("na|do"),
        r"\b"
        + _ICP_PL
        + _FEW_WORDS
        + r"(?:należy|trzeba|musi\s+zostać|ma\s+zostać|powinien\s+zostać|powinny\s+zostać)\s+"
        r"(?:wysła\w*|przesła\w*|przekaza\w*)" + _to("na|do"),
    ],
}

_SEND = {
    "en": [
        # An order to send what the account knows to an address. Not "your ...": a
        # product's help page tells its own users what to do with their playbooks.
        _ORDER_EN
        + _SEND_VERB_EN
        + r"\s+(?:(?!your\b|their\b|his\b|her\b)[\w'’-]+\s+){0,4}?"
        + _BUSINESS_EN
        + _FEW_WORDS
        + _to("to|with|into|onto", _DETERMINER),
        # ... said in the passive ("the ICP must be forwarded to ..."), or address first.
        r"\b"
        + _BUSINESS_EN
        + _FEW_WORDS
        + r"(?:must|should|shall|needs?\s+to|is\s+to|are\s+to|has\s+to|have\s+to)\s+(?:also\s+)?"
        r"(?:be\s+)?(?:sent|forwarded|e-?mailed|mailed|shared|uploaded|submitted|delivered|"
        r"posted|copied|exported)" + _to("to|with|into|onto", _DETERMINER),
        _ORDER_EN
        + r"(?:e-?mail|mail|message|reply\s+to|write\s+to)\s+"
        + _EMAIL
        + r"\s+(?:with\s+)?(?:[\w'’-]+\s+){0,3}?"
        + _BUSINESS_EN
        + r"\b",
        r"\b(?:send|sends|sending|e-?mail|e-?mails|forward|forwards|post|upload|transmit|exfiltrate|"
        r"leak|share|submit|copy|paste|report|relay|deliver|reply|bcc|cc|dm|message|export\w*)\s+"
        + _words(6)
        + r"(?:conversations?|chats?|chat\s+history|thread|email\s+thread|context|memory|memories|"
        r"session|system\s+prompt|prompts?|instructions|api[\s_-]*keys?|keys|credentials|tokens?|"
        r"passwords?|secrets?|cookies|(?:private|personal|user|customer|client|account|internal)\s+"
        r"(?:data|info\w*|details)|data|customer\s+list|contacts?(?:\s+list)?|prospect\s+list|"
        r"company\s+list|account\s+list|notes|research|dossiers?|inbox|history|"
        r"export|task|names|everything|all\s+of\s+it)\b" + _SENTENCE + "{0,160}?" + _DEST,
        r"\b(?:send|e-?mail|forward|post|upload|transmit|exfiltrate|leak|copy|reply\s+\w+\s+\S+\s+"
        r"with)\s+"
        + _words(4)
        + r"(?:system\s+prompt|api[\s_-]*keys?|credentials|passwords?|secrets?|tokens?|chat\s+"
        r"history|conversation(?:\s+history)?|your\s+instructions|your\s+(?:context|memory))\b",
        r"\b(?:bcc|cc)\b[^\n]{0,40}?" + _EMAIL + "|" + _EMAIL + r"[^\n]{0,20}?\b(?:in|as|to)\s+"
        r"(?:the\s+)?(?:bcc|cc)\b",
        r"(?:^|[.!?:;\n]\s*)(?:please\s+|now\s+|also\s+|immediately\s+|then\s+|and\s+)*(?:e-?mail|"
        r"contact|message|notify|write\s+to|reach\s+out\s+to|invite)\s+"
        + _EMAIL
        + r"[^.\n]{0,80}?\b(?:immediately|right\s+away|now|asap|first|with|and\s+(?:tell|say|include|"
        r"attach|send|share|mention))\b",
        r"\b(?:invite|add|include|cc|bcc)\s+(?:also\s+)?" + _EMAIL,
    ],
    "de": [
        r"\b(?:sende|send|schick\w*|leite\w*|übermittel\w*|übermittle|mail\w*|poste|lade|kopier\w*|"
        r"übertrag\w*|teile|senden|senden\s+sie|weiterleiten)\s+(?:[\w'’-]+\s+){0,8}?(?:konversation|"
        r"unterhaltung|gesprächsverlauf|chatverlauf|verlauf|kontext|speicher|gedächtnis|"
        r"systemprompt|systemanweisung\w*|anweisungen|api-schlüssel\w*|schlüssel|zugangsdaten|"
        r"passw(?:ö|o)rt\w*|token\w*|geheimnisse|kundendaten|kundenliste|kontaktliste|kontakte|"
        r"notizen|daten|e-mail-adresse\w*|interessentenliste|liste|export|alles)\b"
        r"" + _SENTENCE + "{0,160}?" + _DEST,
        r"\b(?:konversation|unterhaltung|gesprächsverlauf|chatverlauf|mailverlauf|verlauf|kontext|"
        r"systemprompt|api-schlüssel\w*|zugangsdaten|passw(?:ö|o)rt\w*|token\w*|kundendaten|"
        r"kundenliste|kontaktliste|crm-export|export|liste\s+der\s+firmen|notizen)\b"
        + _SENTENCE
        + r"{0,120}?\b(?:an|nach|auf|zu)\s+"
        + _DEST
        + _SENTENCE
        + r"{0,60}?\b(?:send\w*|schick\w*|"
        r"übermittel\w*|weiterleit\w*|mail\w*|übertrag\w*)\b",
        r"\b(?:sende|schicke?|leite|übermittle|maile|kopiere)\s+(?:[\w'’-]+\s+){0,4}?(?:systemprompt|"
        r"api-schlüssel\w*|zugangsdaten|passw(?:ö|o)rt\w*|gesprächsverlauf|chatverlauf|deine\s+"
        r"anweisungen)\b",
        r"\b(?:bcc|cc|blindkopie|kopie)\b[^\n]{0,40}?"
        + _EMAIL
        + "|"
        + _EMAIL
        + r"[^\n]{0,30}?\b(?:in|als|ins)\s+(?:die\s+)?(?:bcc|cc|blindkopie|kopie)\b",
        r"\b(?:kontaktiere|kontaktieren\s+sie|schreibe?|schreiben\s+sie|maile|mailen\s+sie|lade|"
        r"laden\s+sie)\s+(?:[\w'’-]+\s+){0,2}?(?:an\s+)?"
        + _EMAIL
        + r"[^.\n]{0,60}?\b(?:sofort|umgehend|"
        r"unverzüglich|ein|und\s+(?:teile|sag|schick|sende|nenne))\b",
    ],
    "fr": [
        r"\b(?:envoi\w*|envoy\w*|transmet\w*|transmis|transf[eè]r\w*|copie\w*|publie\w*|poste\w*|"
        r"partage\w*|téléverse\w*|expédie\w*|fais\s+suivre|faites\s+suivre|export\w*)\s+"
        r"(?:[\w'’-]+\s+){0,8}?"
        r"(?:conversations?|historique|fil|contexte|mémoire|prompt\s+système|consignes|"
        r"instructions|clés?\s+(?:d')?api|clé|identifiants|mots\s+de\s+passe|jetons?|secrets?|"
        r"données|notes|liste|contacts|adresse\s+e-?mail|export|récapitulatif|tout)\b"
        + _SENTENCE
        + "{0,160}?"
        + _DEST,
        r"\b(?:envoie|envoyez|transmets|transmettez|copie|copiez)\s+(?:[\w'’-]+\s+){0,4}?(?:prompt\s+"
        r"système|clés?\s+(?:d')?api|identifiants|mots\s+de\s+passe|historique\s+de\s+(?:la\s+)?"
        r"conversation|tes\s+instructions|vos\s+instructions)\b",
        r"\b(?:cci|cc|copie\s+cachée)\b[^\n]{0,40}?"
        + _EMAIL
        + r"|\binvite\w*\s+(?:aussi\s+)?"
        + _EMAIL
        + "|"
        + _EMAIL
        + r"[^\n]{0,20}?\ben\s+(?:copie(?:\s+cachée)?|cci|cc)\b",
        r"\b(?:contacte|contactez|écris|écrivez)\s+(?:[\w'’-]+\s+){0,2}?(?:à\s+)?"
        + _EMAIL
        + r"[^.\n]{0,60}?\b(?:immédiatement|tout\s+de\s+suite|sans\s+attendre|et\s+(?:dis|dites|"
        r"envoie|envoyez|indique|indiquez))\b",
    ],
    "es": [
        r"\b(?:envía|envíe|envia|enviar|envíen|manda|mande|mandar|reenvía|reenvíe|reenvia|"
        r"transmite|transmita|publica|publique|sube|suba|comparte|comparta|copia|copie|remite|"
        r"remita|export\w*)\s+(?:[\w'’-]+\s+){0,8}?(?:conversaci(?:ón|ones)|historial|hilo|contexto|memoria|"
        r"prompt\s+del\s+sistema|instrucciones|claves?\s+(?:de\s+)?api|clave|credenciales|"
        r"contraseñas?|tokens?|secretos?|datos|notas|lista|contactos|dirección\s+de\s+correo|"
        r"exportación|resumen|todo)\b" + _SENTENCE + "{0,160}?" + _DEST,
        r"\b(?:envía|envíe|manda|mande|reenvía|reenvíe|copia|copie)\s+(?:[\w'’-]+\s+){0,4}?(?:prompt\s+"
        r"del\s+sistema|claves?\s+(?:de\s+)?api|credenciales|contraseñas?|historial\s+de\s+(?:la\s+)?"
        r"conversación|tus\s+instrucciones|sus\s+instrucciones)\b",
        r"\b(?:cco|cc|copia\s+oculta)\b[^\n]{0,40}?"
        + _EMAIL
        + r"|\binvit\w*\s+(?:también\s+)?(?:a\s+)?"
        + _EMAIL
        + "|"
        + _EMAIL
        + r"[^\n]{0,20}?\ben\s+(?:copia(?:\s+oculta)?|cco|cc)\b",
        r"\b(?:contacta|contacte|escribe|escriba)\s+(?:[\w'’-]+\s+){0,2}?(?:a\s+)?"
        + _EMAIL
        + r"[^.\n]{0,60}?\b(?:inmediatamente|ya|de\s+inmediato|cuanto\s+antes|y\s+(?:dile|dígale|"
        r"envía|envíe|indica|indique))\b",
    ],
    "pl": [
        r"\b(?:wyślij\w*|wysyła\w*|prześlij\w*|przesła\w*|przekaż\w*|przekaz\w*|skopiuj\w*|"
        r"opublikuj\w*|wrzuć\w*|udostępnij\w*|załącz\w*|wklej\w*|(?:wy)?eksport\w*)\s+"
        r"(?:[\w'’-]+\s+){0,8}?(?:rozmow\w*|histori\w*|wątek\w*|kontekst\w*|pamię\w*|prompt\w*\s+"
        r"systemow\w*|instrukcj\w*|klucz\w*(?:\s+api)?|dane\s+logowania|hasł\w*|haseł|token\w*|"
        r"sekret\w*|dan\w*|notatk\w*|notat\w*|list\w*|kontakt\w*|adres\w*\s+e-mail|"
        r"eksport\w*|podsumowani\w*|wszystko)\b" + _SENTENCE + "{0,160}?" + _DEST,
        r"\b(?:wyślij\w*|prześlij\w*|przekaż\w*|skopiuj\w*)\s+(?:[\w'’-]+\s+){0,4}?(?:prompt\w*\s+"
        r"systemow\w*|klucz\w*\s+api|dane\s+logowania|hasł\w*|histori\w*\s+rozmow\w*|"
        r"swoje\s+instrukcje|twoje\s+instrukcje)\b",
        r"\b(?:udw|dw|ukryt\w*\s+kopi\w*)\b[^\n]{0,40}?"
        + _EMAIL
        + r"|\bzaprasz\w*\s+(?:też\s+|również\s+)?"
        + _EMAIL
        + r"|\bzaproś\w*\s+(?:też\s+|również\s+)?"
        + _EMAIL
        + "|"
        + _EMAIL
        + r"[^\n]{0,20}?\bw\s+(?:udw|dw|ukrytej\s+kopii|kopii)\b",
        r"\b(?:skontaktuj\s+się\s+z|napisz\s+(?:do|na)|wyślij\s+(?:maila|wiadomość|e-mail)\s+"
        r"(?:do|na))\s+" + _EMAIL + r"[^.\n]{0,60}?\b(?:natychmiast|od\s+razu|niezwłocznie|"
        r"jak\s+najszybciej|i\s+(?:powiedz|przekaż|wyślij|podaj|napisz))\b",
    ],
}
_SEND_TRIGGERS = (
    "@",
    "http",
    "www.",
    "webhook",
    "endpoint",
    "prompt",
    "key",
    "schlüssel",
    "clé",
    "clave",
    "klucz",
    "credential",
    "password",
    "passwort",
    "mot de passe",
    "contraseña",
    "hasł",
    "token",
    "history",
    "verlauf",
    "historique",
    "historial",
    "histori",
)

#: Calling a tool or running a command.
_TOOL = {
    "en": [
        r"\b(?:call|use|invoke|run|execute|trigger|launch|open|fire)\s+(?:the\s+|your\s+|a\s+|"
        r"this\s+)?(?:[\w-]+\s+){0,2}?(?:tools?|functions?|commands?|plugins?|browser(?:\s+tool)?|"
        r"terminal|shell|bash|powershell|code\s+interpreter|scripts?|mcp(?:\s+server)?|webhooks?)"
        r"\b(?=[^\n]{0,200}?(?:" + _URL + r"|\bto\s+(?:open|create|send|fetch|run|post|submit|"
        r"invite|add|book|delete|update)\b|`))",
        r"(?:^|[.!?:;\n]\s*)(?:please\s+|now\s+|also\s+|immediately\s+|first,?\s+|then\s+|and\s+)*"
        r"(?:call|use|invoke|run|execute|trigger|launch|fire)\s+(?:the\s+|your\s+)?(?:[\w-]+\s+)"
        r"{0,2}?(?:tools?|functions?|commands?|plugins?|terminal|shell|bash|powershell|code\s+"
        r"interpreter|mcp(?:\s+server)?)\b",
        r"\b(?:run|execute|eval(?:uate)?)\s+(?:the\s+following|this|these)\s+(?:code|commands?|"
        r"scripts?|snippet|python|javascript|shell|bash)\b",
        r"\b(?:tool|function)[\s_-]?(?:call|use|invocation)\s*[:({]|<\s*/?\s*(?:tool_call|"
        r"function_call|invoke)\b",
    ],
    "de": [
        r"(?:^|[.!?:;\n]\s*|\bbitte\s+|\bund\s+|\bdann\s+|\bzuerst\s+)(?:rufe?|ruft|nutze|nutzt|"
        r"nutzen\s+sie|verwende|verwendet|verwenden\s+sie|benutze|benutzt|benutzen\s+sie|starte|"
        r"startet|starten\s+sie|führe|führt|führen\s+sie|löse|öffne|öffnet|öffnen\s+sie)\s+"
        r"(?:[\w'’-]+\s+){0,3}?(?:das\s+|die\s+|den\s+)?(?:[\w-]+-)?(?:tool|werkzeug|funktion|befehl|"
        r"kommando|browser|terminal|shell|skript|script|webhook)s?\b",
    ],
    "fr": [
        r"(?:^|[.!?:;\n]\s*|\bpuis\s+|\bet\s+|\bensuite\s+|\bensuite,\s+|\bd'abord\s+|"
        r"\bavant\s+\w+(?:\s+\w+)?,\s+)(?:utilise|utilisez|appelle|appelez|exécute|exécutez|"
        r"lance|lancez|invoque|invoquez|déclenche|déclenchez|ouvre|ouvrez)\s+(?:[\w'’-]+\s+){0,2}?"
        r"(?:l'|la\s+|le\s+|les\s+|ton\s+|votre\s+)?(?:outils?|fonctions?|commandes?|navigateur|"
        r"terminal|shell|scripts?|webhook)\b",
    ],
    "es": [
        r"(?:^|[.!?:;\n]\s*|\bluego\s+|\by\s+|\bdespués\s+|\bpor\s+favor,?\s+|\bantes\s+de\s+"
        r"\w+,\s+)(?:usa|use|utiliza|utilice|llama|llame|ejecuta|ejecute|invoca|invoque|lanza|"
        r"lance|activa|active|abre|abra|abran|dispara|dispare)\s+(?:a\s+)?(?:[\w'’-]+\s+){0,3}?(?:la\s+|"
        r"el\s+|las\s+|los\s+|tu\s+|su\s+|con\s+la\s+)?(?:herramientas?|funci(?:ón|ones)|"
        r"comandos?|navegador|terminal|shell|scripts?|webhook)\b",
    ],
    "pl": [
        r"(?:^|[.!?:;\n]\s*|\bpotem\s+|\bnastępnie\s+|\bi\s+|\bproszę\s+|\bprzed\s+\w+\s+)"
        r"(?:użyj\w*|uruchom\w*|wywołaj\w*|wykonaj\w*|odpal\w*|skorzystaj\w*\s+z|otwórz\w*|"
        r"włącz\w*)\s+(?:[\w'’-]+\s+){0,2}?(?:narzędzi\w*|funkcj\w*|polece\w*|komend\w*|przeglądar\w*|"
        r"terminal\w*|powłok\w*|skrypt\w*|webhook\w*)\b",
    ],
}
_TOOL_TRIGGERS = {
    "en": (
        "tool",
        "function",
        "command",
        "plugin",
        "browser",
        "terminal",
        "shell",
        "bash",
        "interpreter",
        "script",
        "mcp",
        "webhook",
        "code",
        "snippet",
        "python",
        "javascript",
    ),
    "de": (
        "tool",
        "werkzeug",
        "funktion",
        "befehl",
        "kommando",
        "browser",
        "terminal",
        "shell",
        "skript",
        "script",
        "webhook",
    ),
    "fr": ("outil", "fonction", "commande", "navigateur", "terminal", "shell", "script", "webhook"),
    "es": (
        "herramienta",
        "función",
        "funciones",
        "comando",
        "navegador",
        "terminal",
        "shell",
        "script",
        "webhook",
    ),
    "pl": (
        "narzędzi",
        "funkcj",
        "polece",
        "komend",
        "przeglądar",
        "terminal",
        "powłok",
        "skrypt",
        "webhook",
    ),
}

#: Kit's own tools, secrets on disk and a download run in a shell: the same in every language.
ANY_LANGUAGE: list[Rule] = [
    Rule("tool", ("outreach_",), r"\boutreach_[a-z_]{3,}\b"),
    Rule(
        "send",
        ("~/", "$home", ".kit", ".ssh", ".aws", ".env", "expanduser"),
        r"(?:~|\$home|\$\{home\}|expanduser\(['\"]~)/?\.?(?:kit|ssh|aws|config|netrc|env|npmrc|"
        r"docker|kube|gnupg)\b[^\n]{0,160}|(?:curl|wget|urlopen|requests\.\w+|fetch|"
        r"invoke-webrequest)\b[^\n]{0,200}?(?:~|\$home)/\.",
    ),
    Rule(
        "tool",
        ("curl", "wget", "| sh", "|sh", "| bash", "|bash", "iex", "powershell"),
        r"\b(?:curl|wget)\b[^\n`]{0,200}?\|\s*(?:sudo\s+)?(?:sh|bash|zsh|python\d?)\b|"
        r"\biex\s*\(|\bpowershell\s+-(?:enc|e|command)\b",
    ),
    Rule(
        "tool",
        ('"name"', '"tool"', '"function"', "<tool", "<function"),
        r"\"(?:tool|tool_name|function|name)\"\s*:\s*\"[a-z]+_[a-z_]+\"|<\s*/?\s*(?:tool_call|"
        r"function_call)\b",
    ),
]

#: The system prompt asked for, in any language: only an attacker wants it encoded,
#: appended to a link or sent.
ANY_LANGUAGE.append(
    Rule(
        "send",
        ("prompt",),
        r"\b(?:system\s*prompt|systemprompt|system-prompt|prompt\s+(?:du\s+)?système|prompt\s+del?\s+"
        r"sistema|prompt\w*\s+systemow\w*)\b" + _SENTENCE + r"{0,160}?\b(?:base\s?64|encod\w*|"
        r"kodier\w*|codific\w*|cod[eé]\w*|zakoduj\w*|append\w*|anhäng\w*|anhang\w*|pega\w*|"
        r"colle\w*|dokle\w*|doklej\w*|wklej\w*|https?://|www\.|@[\w-]+\.)|"
        r"\b(?:base\s?64|encod\w*|kodier\w*|codific\w*|zakoduj\w*)\b" + _SENTENCE + r"{0,80}?\b"
        r"(?:system\s*prompt|systemprompt|prompt\s+(?:du\s+)?système|prompt\s+del?\s+sistema|"
        r"prompt\w*\s+systemow\w*)\b",
    )
)
#: "Replace SUMMARY_OF_CHAT with ...": a placeholder to be filled with what the agent knows.
ANY_LANGUAGE.append(
    Rule(
        "send",
        ("replace", "ersetz", "rempla", "reemplaz", "sustitu", "zastąp", "zamień", "podstaw"),
        r"\b(?:replace|ersetz\w*|rempla[cç]\w*|reemplaz\w*|sustitu\w*|zastąp\w*|zamień\w*|podstaw\w*)"
        r"\s+(?-i:[A-Z][A-Z_]{5,})\b|(?-i:\b[A-Z][A-Z_]{5,})\s+(?:durch|par|por|con|na|with)\s+",
    )
)


_MEMORY_WRITE = {
    "en": r"(?:^|[.!?:;\n]\s*)(?:please\s+|now\s+|also\s+|immediately\s+|first,?\s+|then\s+|"
    r"and\s+)*(?:update|overwrite|replace|change|set|store|save|write|add|insert|append|delete|"
    r"remove|mark|record|raise|lower|unsubscribe|suppress|unsuppress|whitelist|blacklist|flag)\s+"
    + _words(5)
    + r"(?:(?:the|your|our|kit'?s?|this\s+account'?s?)\s+)(?:brand\s+voice|icp|ideal\s+customer\s+"
    r"profile|scoring\s+rubric|rubric|business\s+memory|memory|banned\s+phrases|product\s+catalog|"
    r"catalog|price\s+list|suppression\s+list|do-not-contact\s+list|prospect\s+list|outreach\s+"
    r"list|campaigns?|confidence|notes?|dossier)\b",
    "de": r"(?:^|[.!?:;\n]\s*|\bbitte\s+|\bund\s+|\bdann\s+|\bsofort\s+)(?:aktualisiere|"
    r"überschreibe|ersetze|ändere|setze|speichere|füge|trage|lösche|entferne|markiere|schreibe|"
    r"hinterlege|nimm|aktualisieren\s+sie|überschreiben\s+sie|ersetzen\s+sie|ändern\s+sie|"
    r"setzen\s+sie|speichern\s+sie|fügen\s+sie|tragen\s+sie|löschen\s+sie|entfernen\s+sie|"
    r"markieren\s+sie|nehmen\s+sie)\s+(?:[\w'’-]+\s+){0,6}?(?:die\s+|den\s+|das\s+|der\s+|in\s+die\s+|"
    r"in\s+den\s+|in\s+das\s+|zur\s+|zum\s+)?(?:markenstimme|brand[\s-]voice|icp|"
    r"idealkundenprofil|kundenprofil|bewertungsschema|scoring|business[\s-]memory|"
    r"geschäftsgedächtnis|gedächtnis|speicher|notiz(?:en)?|sperrliste|suppressionsliste|"
    r"kampagne\w*|verbotenen?\s+(?:phrasen|formulierungen)|produktkatalog|katalog|preisliste|"
    r"konfidenz|interessentenliste|verteiler\w*)\b",
    "fr": r"(?:^|[.!?:;\n]\s*|\bpuis\s+|\bet\s+|\bensuite\s+)(?:mets|mettez|remplace|remplacez|"
    r"modifie|modifiez|change|changez|enregistre|enregistrez|ajoute|ajoutez|supprime|supprimez|"
    r"écris|écrivez|inscris|inscrivez|marque|marquez|retire|retirez|écrase|écrasez)\s+"
    r"(?:[\w'’-]+\s+){0,6}?(?:la\s+|le\s+|les\s+|l'|à\s+la\s+|au\s+|aux\s+|dans\s+la\s+|dans\s+le\s+)?"
    r"(?:voix\s+de\s+(?:la\s+)?marque|icp|profil\s+(?:de\s+)?client\s+idéal|grille\s+de\s+notation|"
    r"mémoire|notes?|liste\s+(?:d'exclusion|noire|de\s+suppression|de\s+prospects|de\s+diffusion)|"
    r"campagnes?|expressions?\s+interdites?|catalogue|liste\s+de\s+prix|confiance)\b",
    "es": r"(?:^|[.!?:;\n]\s*|\bluego\s+|\by\s+|\bdespués\s+|\bpor\s+favor,?\s+)(?:actualiza|"
    r"actualice|sobrescribe|sobrescriba|reemplaza|reemplace|cambia|cambie|modifica|modifique|"
    r"guarda|guarde|añade|añada|agrega|agregue|elimina|elimine|borra|borre|marca|marque|escribe|"
    r"escriba|incluye|incluya|registra|registre|quita|quite)\s+(?:[\w'’-]+\s+){0,6}?(?:la\s+|el\s+|"
    r"los\s+|las\s+|a\s+la\s+|al\s+|en\s+la\s+|en\s+el\s+)?(?:voz\s+de\s+(?:la\s+)?marca|icp|"
    r"perfil\s+(?:de\s+)?cliente\s+ideal|rúbrica|memoria|notas?|lista\s+(?:de\s+)?(?:supresión|"
    r"exclusión|negra|prospectos|contactos)|campañas?|frases\s+prohibidas|catálogo|lista\s+de\s+"
    r"precios|confianza)\b",
    "pl": r"(?:^|[.!?:;\n]\s*|\bpotem\s+|\bnastępnie\s+|\bi\s+|\bproszę\s+)(?:zaktualizuj\w*|"
    r"nadpisz\w*|zastąp\w*|zmień\w*|ustaw\w*|zapisz\w*|dodaj\w*|dopisz\w*|usuń\w*|oznacz\w*|"
    r"wpisz\w*|skasuj\w*|wykreśl\w*)\s+(?:[\w'’-]+\s+){0,6}?(?:do\s+|w\s+|z\s+)?(?:głos\w*\s+mark\w*|"
    r"icp|profil\w*\s+(?:idealnego\s+)?klienta|rubryk\w*|pamię\w*|notat\w*|notatk\w*|"
    r"list\w*\s+(?:wyklucze\w*|zablokowan\w*|prospekt\w*|kontakt\w*|mailingow\w*)|kampani\w*|"
    r"zakazan\w*\s+(?:fraz\w*|zwrot\w*)|katalog\w*|cennik\w*|pewnoś\w*)\b",
}
_MEMORY_TRIGGERS = {
    "en": (
        "voice",
        "icp",
        "customer profile",
        "rubric",
        "memory",
        "banned",
        "catalog",
        "price list",
        "suppression",
        "do-not-contact",
        "list",
        "campaign",
        "confidence",
        "note",
        "dossier",
    ),
    "de": (
        "markenstimme",
        "voice",
        "icp",
        "kundenprofil",
        "bewertung",
        "scoring",
        "memory",
        "gedächtnis",
        "speicher",
        "notiz",
        "sperrliste",
        "suppression",
        "kampagne",
        "verboten",
        "katalog",
        "preisliste",
        "konfidenz",
        "interessenten",
        "verteiler",
    ),
    "fr": (
        "voix",
        "icp",
        "client idéal",
        "grille",
        "mémoire",
        "note",
        "liste",
        "campagne",
        "interdit",
        "catalogue",
        "confiance",
    ),
    "es": (
        "voz",
        "icp",
        "cliente ideal",
        "rúbrica",
        "memoria",
        "nota",
        "lista",
        "campaña",
        "prohibid",
        "catálogo",
        "confianza",
    ),
    "pl": (
        "głos",
        "icp",
        "klienta",
        "rubryk",
        "pamię",
        "notat",
        "list",
        "kampani",
        "zakazan",
        "katalog",
        "cennik",
        "pewnoś",
    ),
}

_TELL_TRIGGERS = {
    "en": ("user", "human", "operator", "reader", "customers you"),
    "de": ("nutzer", "benutzer", "anwender", "user"),
    "fr": ("utilisat", "humain", "lecteur"),
    "es": ("usuari", "human", "lector", "client"),
    "pl": ("użytkownik", "człowiek", "czytelnik"),
}
_SUBJECT_TRIGGERS = {
    "en": _AI_TRIGGERS["en"],
    "de": _AI_TRIGGERS["de"],
    "fr": _AI_TRIGGERS["fr"],
    "es": _AI_TRIGGERS["es"],
    "pl": _AI_TRIGGERS["pl"],
}
_ADDRESS_EXTRA = {
    "en": [
        Rule(
            "address",
            ("if you", "in case you", "are you"),
            r"\b(?:if\s+you\s+are|if\s+you're|in\s+case\s+you\s+are|are\s+you)\s+an?\s+(?:ai|"
            r"a\.i\.|llm|large\s+language\s+model|language\s+model|artificial\s+intelligence|"
            r"ai[\s-]\w+|automated\s+\w+|assistant|chatbot|bot|crawler|scraper|agent|model)\b",
        ),
        Rule(
            "address",
            (
                "reading",
                "processing",
                "summari",
                "parsing",
                "crawling",
                "scraping",
                "analy",
                "reviewing",
                "indexing",
                "visiting",
                "ingesting",
                " read ",
                "process",
                "parse",
            ),
            r"\b(?:ai|llms?|language\s+models?|ai[\s-]\w+|automated\s+(?:agents?|assistants?|"
            r"systems?|tools?)|bots|crawlers|assistants|agents|models)\s+(?:that\s+(?:are\s+)?|"
            r"who\s+(?:are\s+)?)?(?:reading|processing|summari[sz]ing|parsing|crawling|scraping|"
            r"analy[sz]ing|reviewing|indexing|visiting|ingesting|read|process|summari[sz]e|parse)"
            r"\s+(?:this|these)\b",
        ),
    ],
    "de": [
        Rule(
            "address",
            ("wenn du", "wenn sie", "falls du", "falls sie", "sofern"),
            r"\b(?:wenn|falls|sofern)\s+(?:du|sie)\s+(?:eine?|ein)\s+(?:ki|k\.i\.|künstliche\s+"
            r"intelligenz|ki-\w+|sprachmodell|llm|assistent(?:in)?|chatbot|bot|crawler|agent|"
            r"ki\s+\w+)\s+(?:bist|sind)\b",
        ),
        Rule(
            "address",
            (
                "lesen",
                "verarbeiten",
                "zusammenfass",
                "auswerten",
                "analysieren",
                "crawlen",
                "durchsuchen",
            ),
            r"\b(?:ki|kis|ki-[\w-]+|sprachmodelle|llms|agenten|assistenten|crawler|bots),?\s+die\s+"
            r"(?:diese[ns]?|das|den|hier)\s+(?:[\w'’-]+\s+){0,2}(?:lesen|verarbeiten|zusammenfassen|"
            r"auswerten|analysieren|crawlen|durchsuchen)\b",
        ),
        Rule(
            "address",
            ("zusammenfasst", "liest", "verarbeitest", "auswertest"),
            r"\bwenn\s+du\s+(?:[\w'’-]+\s+){0,4}?(?:zusammenfasst|liest|verarbeitest|auswertest)\b",
        ),
    ],
    "fr": [
        Rule(
            "address",
            ("si tu", "si vous"),
            r"\bsi\s+(?:tu\s+es|vous\s+êtes)\s+(?:une?|un)\s+(?:ia|i\.a\.|intelligence\s+"
            r"artificielle|assistant(?:e)?|agent|modèle|llm|chatbot|robot|bot|crawler)\b",
        ),
        Rule(
            "address",
            (" qui ",),
            r"\b(?:ia|intelligences?\s+artificielles?|assistants?|agents?(?:\s+ia)?|modèles?|"
            r"llms?|robots?)\s+qui\s+(?:lisent|lit|lisez|traitent|traite|analysent|analyse|"
            r"résument|résume|parcourent|parcourt|indexent)\s+(?:ceci|cela|cette|ce|ces)\b",
        ),
    ],
    "es": [
        Rule(
            "address",
            ("si eres", "si es usted", "si usted es"),
            r"\bsi\s+(?:eres|es\s+usted|usted\s+es)\s+(?:una?|un)\s+(?:ia|i\.a\.|inteligencia\s+"
            r"artificial|asistente|agente|modelo|llm|chatbot|bot|robot|rastreador)\b",
        ),
        Rule(
            "address",
            (" que ",),
            r"\b(?:ia|ias|inteligencias?\s+artificial(?:es)?|asistentes?|agentes?(?:\s+de\s+ia)?|"
            r"modelos?(?:\s+de\s+lenguaje)?|llms?|bots?)\s+que\s+(?:lea|lean|lee|leen|procese|"
            r"procesen|procesa|procesan|resuma|resuman|resume|resumen|analice|analicen|analizan|"
            r"rastreen|indexen)\s+(?:esto|esta|este|estos|estas)\b",
        ),
        Rule(
            "address",
            ("cuando resumas", "cuando leas", "al resumir"),
            r"\b(?:cuando\s+(?:resumas|leas|proceses|analices)|al\s+resumir)\b",
        ),
    ],
    "pl": [
        Rule(
            "address",
            ("jeśli", "jeżeli", "gdy", "kiedy"),
            r"\b(?:jeśli|jeżeli|gdy|kiedy)\s+(?:jesteś|pan\s+jest|pani\s+jest|jest\s+(?:pan|pani)"
            r"(?:\s+(?:lub|albo|czy)\s+(?:pan|pani))?)\s+(?:[\w'’-]+\s+)?"
            r"(?:modelem|asystentem|agentem|botem|chatbotem|sztuczną\s+inteligencją|ai|si|llm|"
            r"czatem|robotem|crawlerem)\b",
        ),
        Rule(
            "address",
            ("czyta", "przetwarza", "analizuj", "streszcza", "indeksuj"),
            r"\b(?:modele|agenci|asystenci|systemy|boty|narzędzia|ai|si|inteligencj\w*)\s*,?\s*"
            r"(?:[\w'’-]+\s+){0,2}?(?:czytające|czytający|przetwarzające|przetwarzający|analizujące|"
            r"analizujący|streszczające|streszczający|indeksujące|któr\w+\s+(?:to\s+)?czyta\w*|"
            r"któr\w+\s+(?:to\s+)?przetwarza\w*)\s*(?:tę|ten|to|te|niniejsz\w+)?\b",
        ),
        Rule(
            "address",
            ("streszczając", "czytając"),
            r"\b(?:streszczając|czytając)\s+(?:tę|ten|to)\b",
        ),
    ],
}


#: Orders given without addressing anyone: to "automated readers of this page", to "any
#: summary of this page", as a note "for the next run", or straight to the memory.
_IMPERSONAL: dict[str, list[Rule]] = {
    "en": [
        Rule(
            "address",
            ("automated", "readers", "summar", "crawler", "assistant", "agent", "model"),
            r"\b(?:automated|ai|machine)\s+(?:readers?|agents?|assistants?|systems?|summari[sz]ers?|"
            r"crawlers?|models?)\s+of\s+this\s+(?:page|site|document|profile|article|text)\b|"
            r"\b(?:any|every|each)\s+(?:summary|answer|response|reply|report|output|draft)\s+"
            r"(?:of|about|based\s+on|drawn\s+from|from)\s+this\s+(?:page|site|document|profile|"
            r"article|text)\b[^.\n]{0,80}?\b(?:must|should|shall|will|has\s+to|needs\s+to)\b",
        ),
        Rule(
            "address",
            ("run", "session", "agent", "step", "execution"),
            r"\b(?:reminder|note|instructions?|todo|to\s+do)\s+for\s+(?:the\s+)?(?:next|future|"
            r"later|every|each|any)\s+(?:run|agent|session|step|execution|pass)\b",
        ),
        Rule(
            "override",
            ("expected", "required", "instructed", "supposed"),
            r"\b(?:are|is)\s+(?:expected|required|instructed|supposed|asked)\s+to\s+(?:skip|ignore|"
            r"bypass|omit|leave\s+out|disregard|override)\b",
        ),
    ],
    "de": [
        Rule(
            "memory_write",
            ("gedächtnis", "erinnerung", "speicher", "memory"),
            r"\b(?:im|in\s+der|ins|in\s+das|in\s+den)\s+(?:geschäftsgedächtnis|geschäftserinnerung|"
            r"gedächtnis|speicher|business[\s-]memory|memory)\s+(?:festhalten|speichern|eintragen|"
            r"notieren|vermerken|hinterlegen|ablegen)\b",
        ),
        Rule(
            "address",
            ("zusammenfassung", "antwort", "automatisch", "leser"),
            r"\b(?:jede|jeder|alle)\s+(?:zusammenfassung|antwort|ausgabe)\w*\s+(?:dieser|dieses|"
            r"zu\s+dieser)\s+(?:seite|website|dokument)\w*\b[^.\n]{0,80}?\b(?:muss|soll|darf)\b|"
            r"\bautomatisierte\w*\s+(?:leser|agenten|assistenten|systeme)\w*\s+(?:dieser|dieses)\s+"
            r"(?:seite|website|dokument)",
        ),
    ],
    "fr": [
        Rule(
            "address",
            ("résumé", "réponse", "synthèse", "automatique", "lecteur"),
            r"\b(?:tout|toute|chaque)\s+(?:résumé|réponse|synthèse|compte\s+rendu)\s+(?:de|sur|à\s+"
            r"partir\s+de)\s+(?:cette|ce)\s+(?:page|site|document|texte)\b|"
            r"\b(?:lecteurs|agents|assistants|systèmes)\s+automatiques\s+de\s+(?:cette|ce)\s+"
            r"(?:page|site|document)",
        ),
    ],
    "es": [
        Rule(
            "address",
            ("resumen", "respuesta", "automátic", "lector"),
            r"\b(?:lectores|agentes|asistentes|sistemas)\s+automáticos\s+de\s+(?:esta|este)\s+"
            r"(?:página|sitio|documento)|\b(?:todo|cada|cualquier)\s+(?:resumen|respuesta|informe)"
            r"\s+(?:de|sobre)\s+(?:esta|este)\s+(?:página|sitio|documento)\b",
        ),
    ],
    "pl": [
        Rule(
            "address",
            ("streszcza", "czyta", "przetwarza", "analizuje", "niech"),
            r"\bkto\s+(?:streszcza|czyta|przetwarza|analizuje|podsumowuje)\s+(?:tę|ten|to|te)\s+"
            r"\w+[^.\n]{0,60}?\bniech\b|\b(?:każde|każda|każdy)\s+(?:streszczenie|podsumowanie|"
            r"odpowiedź)\s+(?:tej|tego)\s+(?:strony|dokumentu|tekstu)\b",
        ),
    ],
}


def rules() -> list[tuple[str, Rule]]:
    """Every rule with the language it is written in ("" for any)."""
    found: list[tuple[str, Rule]] = [("", rule) for rule in ANY_LANGUAGE]
    for language in ("en", "de", "fr", "es", "pl"):
        found.append((language, _addressed(language)))
        found += [(language, rule) for rule in _ADDRESS_EXTRA[language]]
        found += [(language, rule) for rule in _IMPERSONAL[language]]
        found.append(
            (language, Rule("address", _SUBJECT_TRIGGERS[language], _SUBJECT_ORDER[language]))
        )
        found.append((language, Rule("address", _TELL_TRIGGERS[language], _TELL_USER[language])))
        found.append((language, Rule("conceal", _CONCEAL_TRIGGERS[language], _CONCEAL[language])))
        found += [
            (language, Rule("override", _OVERRIDE_TRIGGERS[language], pattern))
            for pattern in _OVERRIDE[language]
        ]
        found.append((language, Rule("role", _ROLE_TRIGGERS[language], _ROLE[language])))
        found += [(language, Rule("send", _SEND_TRIGGERS, pattern)) for pattern in _SEND[language]]
        found += [
            (language, Rule("send", _SEND_TRIGGERS, pattern))
            for pattern in _BUSINESS_SEND.get(language, [])
        ]
        found += [
            (language, Rule("tool", _TOOL_TRIGGERS[language], pattern))
            for pattern in _TOOL[language]
        ]
        found.append(
            (
                language,
                Rule("memory_write", _MEMORY_TRIGGERS[language], _MEMORY_WRITE[language]),
            )
        )
    return found
