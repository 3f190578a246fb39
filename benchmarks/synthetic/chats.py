"""Support chats: conversations of 2-4 records in which the customer's details recur."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from benchmarks.synthetic.context import Ctx, fresh_value
from benchmarks.synthetic.people import Person, address_for, first_name, make_person, person_slots
from benchmarks.synthetic.records import build_record, record_problems
from benchmarks.synthetic.text import Doc, Picker, Slots
from benchmarks.synthetic.values import account_id, credit_card, fmt_date, iban, ipv4, ipv6, order_id
from curation.core.spans import (
    ACCOUNT_ID,
    CREDIT_CARD,
    DATE_TIME,
    IBAN_CODE,
    IP_ADDRESS,
    ORGANIZATION,
    PERSON,
    STREET_ADDRESS,
    USERNAME,
)

PRODUCTS = [
    "Aero X2 router",
    "Halo mesh extender",
    "Pulse smart thermostat",
    "Vista 4K streaming stick",
    "Lark wireless earbuds",
    "Terra standing desk",
    "Cinder espresso machine",
    "Atlas 27-inch monitor",
    "Orbit robot vacuum",
    "Cirrus air purifier",
    "Beacon video doorbell",
    "Quill e-reader",
]

CUSTOMER_OPEN = [
    "Hi, my name is {name}.",
    "Hello! {name} here, I'm writing about order {order}.",
    "Hey there, this is {first} ({email}).",
    "Good morning. This is {name}, account {account}.",
    "Hello, I'm contacting you on behalf of {company}; my name is {name}.",
    "Hi, it's {name}. You can reach me at {phone} if the chat drops.",
    "Hello, I hope you can help. I'm {name} and my email on file is {email}.",
    "Hi there. Order number is {order}, name on the account is {name}.",
    "Hi, I'm {name}, writing from {city}.",
    "Hello support team, {name} from {company} here.",
    "Hi. I have a problem with order {order}.",
    "Good afternoon, my account is registered under {email}.",
    "Hi, I'm {name}. I need help with a payment I made with my card {card}.",
]

AGENT_GREET = [
    "Hi {first}, thanks for reaching out. My name is {agent} and I'll be helping you today.",
    "Hello {title} {last}, this is {agent} from the support team.",
    "Thanks for contacting us, {first}! I'm {agent}.",
    "Good to hear from you, {title} {last}. {agent} here, I have your ticket open.",
    "Hi there, {agent} with customer care. I'm sorry to hear about the trouble.",
    "Hello and thanks for your patience while we worked through the queue. I'm {agent}.",
    "Hi {first}! I can definitely look into that for you.",
    "Thank you for getting in touch. You're chatting with {agent}.",
]

AGENT_VERIFY = [
    "Before I make any changes, could you confirm the phone number on the account?",
    "For security, can you please confirm the email address and the billing address we have on file?",
    "Could you share the order number? It's printed at the top of the confirmation email.",
    "I just need to verify a couple of details first: your full name and the account number.",
    "To protect your account, please confirm the email you signed up with and I'll send a one-time code.",
    "Can you confirm the date the order was placed? We have several orders under similar names.",
    "Which address should we use for this? I want to make sure nothing goes to an old location.",
    "Quick check before we continue: what's the best number to reach you on if we get disconnected?",
    "Which card did you use for the purchase? I can look the order up by card number.",
]

CUSTOMER_VERIFY = [
    "Sure, the number is {phone}.",
    "My email is {email} and the billing address is {address}.",
    "Account number {account}, and the phone on file should be {phone}.",
    "It's {order}, placed on {date}.",
    "Yes: {name}, {address}.",
    "You can use {email}. If that bounces, try calling {phone} after 5pm.",
    "The order was {order}. I think I ordered it on {date}, but it might have been a day later.",
    "Please use {address}. That's where I live now.",
    "Phone: {phone} / email: {email}",
    "My username is {username}, if that helps, and the account number is {account}.",
    "Of course. {name}, account {account}.",
    "The email is {email}; I registered back on {date}.",
    "I paid with the card {card}, if that helps you find it.",
    "It should be under {email}. The payment came from my account {iban}.",
]

AGENT_ACK = [
    "Thank you, {title} {last}. I can see the account now.",
    "Got it, {title} {last}, everything matches.",
    "Thanks {first}, that matches what I have.",
    "Perfect, I've verified the account for {name}.",
    "Thanks for confirming, {title} {last}. One moment while I check the order history.",
    "I appreciate your patience, {title} {last}.",
    "Thanks, that's all I needed to verify.",
    "Great, I found order {order} on your account.",
]

AGENT_RESUME = [
    "Hi {first}, this is {agent2} following up on your case about order {order}.",
    "Hello {title} {last}, I'm picking up this ticket from my colleague {agent}.",
    "Good morning {first}, {agent2} here with an update on your request.",
    "Hi again {first}. I've reviewed the notes {agent} left on your case.",
    "Hello {title} {last}, thanks for waiting over the weekend.",
]

CUSTOMER_FOLLOWUP = [
    "Hi again, following up on order {order}; I haven't heard anything since {date2}.",
    "It's {name} again. The problem came back this morning.",
    "Just checking in on my ticket. I'm still waiting for an update on {order}.",
    "Hello, I spoke with {agent} on {date2} about this and was told someone would call me at {phone}.",
    "Quick update from my side: I tried everything from the last message.",
    "Sorry for the slow reply, I was travelling for work.",
    "Me again. Is there any news? My account is {account}.",
    "Hi, {first} here. Replying from my other address, {email}, because the first one is full.",
]

AGENT_CLOSE = [
    "Is there anything else I can help you with today?",
    "I've added a note to the account so the next agent can see everything we tried.",
    "You'll receive a confirmation at {email} within the next hour.",
    "I'll follow up by {date2} with an update either way.",
    "Thanks for your patience, {first}. Have a great rest of your day!",
    "If the issue comes back, just reply to this thread and it will come straight to me.",
    "I've also sent a summary to {email} for your records.",
    "The courier will call {phone} before delivery to agree on a time slot.",
    "Take care, {title} {last}, and thanks again for bearing with us.",
]

AGENT_PENDING = [
    "I'm waiting on the warehouse team for this one and will update the ticket as soon as I hear back.",
    "I've escalated the case to tier 2; they usually respond within one business day.",
    "I'll keep this ticket open until we've confirmed the fix is working on your side.",
    "Let me check with my supervisor about an exception and get back to you here.",
]

CUSTOMER_CLOSE = [
    "That's all, thank you so much!",
    "Great, thanks {agent}.",
    "Perfect. I'll keep an eye on my inbox.",
    "Thanks, you've been really helpful.",
    "Okay, I'll wait for the email then.",
    "Appreciate it. Talk soon.",
    "Alright. Fingers crossed it works this time.",
]


@dataclass(frozen=True)
class Topic:
    """Topic-specific chat sentences: customer issues, agent steps, customer replies, resolutions."""

    name: str
    issue: tuple[str, ...]
    steps: tuple[str, ...]
    reply: tuple[str, ...]
    resolve: tuple[str, ...]


TOPICS = [
    Topic(
        "delivery",
        (
            ("My {product} was supposed to arrive on {date2}, but the tracking page hasn't updated in four days."),
            ("The tracking says delivered, but there's nothing at {address} and my neighbours didn't get it either."),
            "I ordered a {product} and it still shows 'label created'. Is it actually on its way?",
            "The parcel for order {order} seems to be going back and forth between two depots.",
        ),
        (
            ("The carrier says the parcel is at a regional sorting hub; delays there usually clear within 48 hours."),
            "Drivers sometimes leave parcels at a side door or with building management, worth a quick look.",
            ("The last scan shows it was weighed but not loaded, so it missed the truck and goes out on the next run."),
            "I've opened a trace with the carrier; they usually answer within two business days.",
            "Holiday volumes are high right now, so some routes are running a day or two behind schedule.",
        ),
        (
            "The tracking still says the same thing. Should I cancel the order?",
            ("The box finally arrived, but it's crushed on one corner. The {product} itself seems fine though."),
            "Can you send the replacement to my office instead? It's {address2}.",
            "I'm away from {date2} for a week, so please don't ship anything until I'm back.",
        ),
        (
            (
                "I've shipped a replacement {product} by express courier at no cost; the new tracking "
                "number will follow by email."
            ),
            (
                "Since the parcel is lost, I've issued a full refund. It can take 3-5 business days to appear, "
                "depending on your bank."
            ),
        ),
    ),
    Topic(
        "billing",
        (
            "I was charged twice for order {order}. Both charges went to my card {card}.",
            "My statement shows a charge I don't recognise from {date2}.",
            "The invoice says annual plan, but I selected monthly when I signed up.",
            "The price at checkout was lower than what I was actually charged for the {product}.",
        ),
        (
            "I see two authorisations; one is a temporary hold that drops off within five business days.",
            ("Pending charges are often still shown by the bank even after the payment processor has voided them."),
            "I've escalated this to billing; they'll reverse the duplicate payment and confirm by email.",
            ("For the refund I can send it back to the original card or by bank transfer, whichever you prefer."),
            "The promotion ended at midnight, but I'll apply the discount manually as a goodwill gesture.",
        ),
        (
            "Please refund it by bank transfer to {iban}.",
            "Can you put it back on the same card? The number is {card}.",
            "Please bill the new card instead: {card}.",
            "Bank transfer is easier for me. The account is {iban}, held in my name.",
        ),
        (
            "The duplicate charge has been reversed. You should see the credit within 3-7 business days.",
            "I've credited the difference to your account and emailed you a corrected invoice.",
        ),
    ),
    Topic(
        "connectivity",
        (
            "My {product} keeps dropping the connection every evening around 8pm.",
            ("Since the last firmware update the wifi disconnects every few minutes and the light blinks orange."),
            "I can't reach the admin page anymore. The WAN address it shows is {ip}.",
            "Video calls freeze constantly even though the speed test looks fine.",
        ),
        (
            "Let's start with a power cycle: unplug the {product} for thirty seconds, then plug it back in.",
            ("Please switch the 5 GHz channel from auto to 36 or 149; crowded channels cause most evening drops."),
            ("If you have a spare cable, connect a laptop to port 1 and run a speed test to rule out the line."),
            ("In the app, go to Settings > Advanced > Firmware and check that you're on version 3.2.7 or later."),
            "Could you tell me the public IP your device reports? It lets me check for errors on our side.",
            "Turning off band steering for a day helps us see whether older devices are causing the drops.",
        ),
        (
            "The diagnostics page lists {ip} as the WAN address, is that right?",
            "I did the power cycle twice. It helped for an hour and then the drops started again.",
            "Firmware says 3.1.9 and the update button is greyed out.",
            "Wired is rock solid, it's only the wifi that drops.",
        ),
        (
            "I've scheduled a technician visit to {address} on {date2} between 8am and noon.",
            "Your line shows signal errors on our side, so I've raised a fault with the network team.",
            ("I've pushed the firmware update remotely; the {product} will restart once in the next few minutes."),
        ),
    ),
    Topic(
        "returns",
        (
            "The {product} I received stopped working after a week. I'd like to return it.",
            "The screen on my {product} has a cluster of dead pixels in the upper left corner.",
            "I ordered the wrong size and would like to exchange it, order {order}.",
        ),
        (
            "Sorry about that. You're within the 30-day window, so a refund or a replacement is possible.",
            "I've generated a prepaid return label; the original box is best, but any sturdy box works.",
            "Once the warehouse scans the return, the refund is released automatically.",
            "Please include all accessories, otherwise the warehouse may hold the return for inspection.",
        ),
        (
            "I'd prefer the refund. The bank account is {iban}.",
            "Please collect it from {address}; I work from home on Tuesdays.",
            "Could the refund go back to my card instead? It's {card}.",
            "I no longer have the box, is that a problem?",
        ),
        (
            "Return authorization {rma} is active and the courier will pick it up on {date2}.",
            "Your refund for order {order} has been approved and will be sent within five business days.",
        ),
    ),
    Topic(
        "account",
        (
            "I can't log in. It says my account {username} is locked after too many attempts.",
            "I never received the password reset email at {email}.",
            "Someone tried to sign in to my account from {ip}; that wasn't me.",
            "I want to change the email on my account from {email} to a work address.",
        ),
        (
            "For your security, I've unlocked the account and signed out all active sessions.",
            "Please check the spam or promotions folder; reset emails sometimes land there.",
            ("I'd strongly recommend turning on two-step verification under Profile > Security once you're back in."),
            "The reset link expires after 30 minutes, so please use it soon after it arrives.",
            "Changing the sign-in email needs a confirmation click from both the old and the new address.",
        ),
        (
            "Got the email now, it was in spam. Logged in fine.",
            "The sign-in attempts came from {ip} again last night.",
            "My username should be {username}, not the email address.",
        ),
        (
            "I've flagged the sign-in attempts from {ip} for our trust and safety team.",
            "Two-step verification is now enforced on the account, and the old sessions have been revoked.",
        ),
    ),
    Topic(
        "subscription",
        (
            "I'd like to cancel my subscription before it renews on {date2}.",
            "Can I switch from the monthly plan to annual without losing my saved settings?",
            "I was promised a student discount but the renewal price is the full amount.",
        ),
        (
            "Switching to annual keeps all your data; the remaining monthly balance is credited pro rata.",
            "Cancelling keeps your access until the end of the current billing period.",
            "The student discount needs re-verification once a year; I can send you the link.",
        ),
        (
            "Use my new card for the renewal: {card}.",
            "Please cancel it then. Account {account}.",
            "Annual is fine, as long as the invoice goes to {company}.",
        ),
        (
            "Auto-renewal is off and your plan stays active until {date2}.",
            "The plan has been switched and the new invoice is on its way to {email}.",
        ),
    ),
    Topic(
        "warranty",
        (
            "My {product} stopped turning on. It's about 14 months old; is it still under warranty?",
            "The hinge on my {product} cracked without being dropped.",
            "The fan on the {product} has started making a grinding noise.",
        ),
        (
            "The warranty is two years, so you're covered. I just need the serial number from the label.",
            "We can send you a prepaid box for a mail-in repair; turnaround is usually seven to ten days.",
            "Before we book a repair, please try a reset by holding the power button for fifteen seconds.",
        ),
        (
            "The reset didn't help. The light comes on for a second and then nothing.",
            "Mail-in is fine. Send the box to {address}.",
            "Is there a repair shop near {city} instead? I'd rather drop it off.",
        ),
        (
            "Repair case {rma} is open and the box will be sent to {address} by {date2}.",
            "We'll replace the unit rather than repair it; the new {product} ships tomorrow.",
        ),
    ),
]


@dataclass
class Conversation:
    """Fixed facts of one support conversation, shared by all its records."""

    scope: str
    person: Person
    topic: Topic
    slots: Slots
    parts: int
    channel: str


def make_conversation(ctx: Ctx, scope: str, parts: int, agents: list[str], topic: Topic) -> Conversation:
    """Draw the customer, topic, agents and every slot value of one conversation."""
    rng = ctx.rng
    person = make_person(ctx)
    fake = ctx.fakers[person.locale]
    agent, agent2 = rng.sample(agents, 2)
    slots: Slots = {
        **person_slots(person),
        "username": (person.username, USERNAME),
        "agent": (agent, PERSON),
        "agent2": (agent2, PERSON),
        "product": (rng.choice(PRODUCTS), None),
        "order": (fresh_value(ctx, lambda: order_id(rng), "order id"), ACCOUNT_ID),
        "account": (fresh_value(ctx, lambda: account_id(rng), "account id"), ACCOUNT_ID),
        "rma": (fresh_value(ctx, lambda: f"RMA-{rng.randint(100000, 999999)}", "rma"), ACCOUNT_ID),
        "date": (fmt_date(rng, ctx.day(), person.locale), DATE_TIME),
        "date2": (fmt_date(rng, ctx.day(), person.locale, with_time=rng.random() < 0.2), DATE_TIME),
        "card": (credit_card(rng), CREDIT_CARD),
        "ip": (ipv4(rng) if rng.random() < 0.85 else ipv6(rng), IP_ADDRESS),
        "address2": (fresh_value(ctx, lambda: address_for(fake, person.locale)[0], "address"), STREET_ADDRESS),
    }
    if person.locale != "en_US" or rng.random() < 0.1:
        slots["iban"] = (iban(ctx.fakers[rng.choice(["de_DE", "fr_FR", "en_GB", "es_ES"])], rng), IBAN_CODE)
    if rng.random() < 0.3:
        slots["company"] = (fresh_value(ctx, lambda: fake.company(), "company"), ORGANIZATION)
    channel = rng.choice(["web-chat", "web-chat", "email", "mobile-app", "phone-transcript"])
    return Conversation(scope, person, topic, slots, parts, channel)


Turn = tuple[str, list[str]]


def chat_turns(rng: random.Random, conv: Conversation, pick: Picker, part: int) -> list[Turn]:
    """The (speaker, sentence templates) turns of one record of a conversation."""
    topic = conv.topic
    turns: list[tuple[str, list[str]]] = []
    if part == 0:
        opener = [pick(CUSTOMER_OPEN)] + ([pick(topic.issue)] if rng.random() < 0.4 else [])
        turns.append(("customer", opener))
        turns.append(("agent", [pick(AGENT_GREET)]))
        if len(turns[0][1]) == 1:
            turns.append(("customer", [pick(topic.issue)]))
    elif rng.random() < 0.5:
        turns.append(("customer", [pick(CUSTOMER_FOLLOWUP)]))
        turns.append(("agent", [pick(AGENT_ACK)] + ([pick(topic.steps)] if rng.random() < 0.6 else [])))
    else:
        turns.append(("agent", [pick(AGENT_RESUME)] + ([pick(topic.steps)] if rng.random() < 0.5 else [])))
        turns.append(("customer", [pick(CUSTOMER_FOLLOWUP)]))
    options: list[list[tuple[str, list[str]]]] = [
        [("agent", [pick(AGENT_VERIFY)]), ("customer", [pick(CUSTOMER_VERIFY)])],
        [("agent", [pick(AGENT_ACK), pick(topic.steps)]), ("customer", [pick(topic.reply, prefer_private=0.4)])],
        [("agent", [pick(topic.steps)]), ("customer", [pick(topic.reply, prefer_private=0.4)])],
    ]
    rng.shuffle(options)
    for pair in options[: 1 if part == 0 else rng.choice([0, 0, 1])]:
        turns.extend(pair)
    if part == conv.parts - 1:
        turns.append(("agent", [pick(topic.resolve)] + ([pick(AGENT_CLOSE)] if rng.random() < 0.5 else [])))
        if rng.random() < 0.35:
            turns.append(("customer", [pick(CUSTOMER_CLOSE)]))
    elif rng.random() < 0.5:
        turns.append(("agent", [pick(AGENT_PENDING)] + ([pick(AGENT_CLOSE)] if rng.random() < 0.3 else [])))
    merged: list[tuple[str, list[str]]] = []
    for speaker, sentences in turns:
        if merged and merged[-1][0] == speaker:
            merged[-1][1].extend(sentences)
        else:
            merged.append((speaker, list(sentences)))
    return merged


def chat_record(rng: random.Random, conv: Conversation, pick: Picker, part: int) -> tuple[str, list[dict[str, Any]]]:
    """Text and spans of record ``part`` of a conversation, one ``speaker: ...`` line per turn."""
    doc = Doc()
    for i, (speaker, sentences) in enumerate(chat_turns(rng, conv, pick, part)):
        if i:
            doc.add("\n")
        doc.add(f"{speaker}: ")
        for j, template in enumerate(sentences):
            if j:
                doc.add(" ")
            doc.render(template, conv.slots)
    return doc.text, doc.spans


def gen_conversation(ctx: Ctx, scope: str, parts: int, agents: list[str], topic: Topic) -> list[dict[str, Any]]:
    """All records of one support conversation (regenerated until every record passes the checks)."""
    for _ in range(200):
        conv = make_conversation(ctx, scope, parts, agents, topic)
        pick = Picker(ctx.rng, conv.slots)
        out = []
        for part in range(parts):
            text, spans = chat_record(ctx.rng, conv, pick, part)
            if record_problems(text, spans, ctx):
                break
            meta = {
                "channel": conv.channel,
                "locale": conv.person.locale,
                "part": part + 1,
                "parts": parts,
                "topic": conv.topic.name,
            }
            out.append(build_record("", "chat", scope, text, spans, meta))
        else:
            return out
    raise RuntimeError(f"could not generate conversation {scope}")


def agent_pool(ctx: Ctx, n: int = 14) -> list[str]:
    """Distinct support-agent first names shared by a data set's conversations."""
    names: list[str] = []
    while len(names) < n:
        name = first_name(ctx)
        if name not in names and len(name) >= 3:
            names.append(name)
    return names


def split_parts(rng: random.Random, total: int) -> list[int]:
    """Split ``total`` records into conversations of 2-4 records each."""
    parts = []
    while total > 0:
        n = rng.choice([2, 3, 3, 4])
        if total - n == 1:
            n += 1 if n < 4 else -1
        n = min(n, total)
        parts.append(n)
        total -= n
    return parts
