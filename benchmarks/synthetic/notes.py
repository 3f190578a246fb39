"""Notes: clinical visit notes, HR case notes and CRM account notes about one person each."""

from __future__ import annotations

from typing import Any

from benchmarks.synthetic.context import Ctx, fresh_value
from benchmarks.synthetic.people import full_name, make_person, person_slots
from benchmarks.synthetic.records import build_record, record_problems
from benchmarks.synthetic.text import Doc, Picker, Slots
from benchmarks.synthetic.values import fmt_date, iban, us_phone
from curation.core.spans import (
    ACCOUNT_ID,
    DATE_TIME,
    IBAN_CODE,
    ORGANIZATION,
    PERSON,
    PHONE_NUMBER,
    US_SSN,
)

NOTE_HEADERS = {
    "clinical": [
        "Visit note, {date}\nPatient: {name} (DOB {dob}), MRN {mrn}\nProvider: Dr. {doctor}\n",
        "Progress note for {name}, seen {date} at {org}.\n",
        "CLINIC NOTE | {org} | {date}\nPt: {name} | DOB: {dob} | MRN: {mrn}\n",
        "Telehealth follow-up with {title} {last} on {date}. Identity confirmed with DOB {dob}.\n",
        "Intake {date}: {name}, DOB {dob}, SSN {ssn}, MRN {mrn}.\n",
    ],
    "hr": [
        "HR case note, {date}\nEmployee: {name}, ID {emp}\nManager: {manager}\n",
        "People Ops record: {name} (employee {emp}), updated {date}.\n",
        "Personnel file addendum for {name}, ID {emp}. Entered {date} by {author}.\n",
        "New hire paperwork, {date}\nName: {name}\nSSN: {ssn}\nStart: {date2}\n",
        "Payroll change request for {name} ({emp}), received {date}. New account: {iban}.\n",
    ],
    "crm": [
        "Account note: {org}\nContact: {name} <{email}>\nDate: {date}\n",
        "Call log {date}: {name} ({org})\n",
        "CRM entry for {org}, primary contact {name}, last touch {date}.\n",
    ],
}

NOTE_BODY = {
    "clinical": [
        "Chief complaint: intermittent headaches for three weeks, worse in the afternoon, no visual changes.",
        ("Patient reports better sleep since cutting evening caffeine but still wakes once or twice per night."),
        "Vitals: BP 128/82, HR 74, temp 98.4 F, SpO2 98% on room air.",
        "Medication list reviewed and reconciled; no new allergies reported.",
        "Plan: continue the current dose, repeat labs in six weeks, return sooner if symptoms worsen.",
        "Home address confirmed as {address}; best callback number {phone}.",
        "Insurance verification required SSN {ssn}, confirmed verbally with the patient.",
        "Referred to Dr. {doctor2} for a cardiology consult.",
        "{title} {last} attended with a family member, who asked about follow-up scheduling.",
        "Discussed diet and exercise goals; patient agreed to walk 20 minutes daily.",
        "Follow-up appointment booked for {date2}.",
        "Emergency contact: {contact}, reachable at {phone2}.",
        "Labs from {date2}: HbA1c 6.1%, LDL 112 mg/dL, both within the expected range on current treatment.",
        "Patient lives in {city} and prefers early-morning appointments.",
        "Mild tenderness over the left lower back, no radiation, full range of motion.",
        "Advised ibuprofen with food as needed and to avoid heavy lifting for two weeks.",
        "Lungs clear to auscultation bilaterally; heart regular rate and rhythm, no murmurs.",
        "Patient portal access re-sent to {email}.",
    ],
    "hr": [
        "Employee requested a change to direct deposit; new bank details are on file.",
        "Onboarding checklist completed: laptop issued, badge activated, benefits enrolment pending.",
        "{first} reported a scheduling conflict with the Thursday on-call rotation.",
        "Background check cleared on {date2}; SSN {ssn} matched the I-9 documents.",
        "Mailing address updated to {address}.",
        "Performance review scheduled for {date2} with {manager}.",
        "Emergency contact listed as {contact}, phone {phone2}.",
        "Discussed a hybrid arrangement: three days remote, Tuesday and Thursday in the office.",
        "Payroll correction for the previous period will be issued with the next cycle.",
        "Reached {title} {last} at {phone}; {first} confirmed the start date of {date2}.",
        "Direct deposit now goes to {iban}.",
        "Requested parental leave starting {date2}; manager approved pending the return-to-work plan.",
        "Exit interview feedback: workload planning and unclear ownership of the reporting backlog.",
        "Personal email for benefits correspondence: {email}.",
    ],
    "crm": [
        "Call with {name} about renewing the enterprise plan; budget approval expected next quarter.",
        "{first} asked for a comparison of the standard and premium support tiers.",
        "Sent the pricing sheet to {email} after the call.",
        "Key decision maker is {contact}; {first} will loop them in for the next demo.",
        "The customer's office moved to {address}; update the invoice address.",
        "Direct line: {phone}.",
        "Main concern is onboarding time for the new warehouse team in {city}.",
        "Agreed to a pilot of 25 seats starting {date2}.",
        "Competitor evaluation in progress; they liked the reporting dashboard but found setup slow.",
        "Follow up in two weeks to check pilot feedback.",
        "Billing contact prefers invoices by post; PO numbers must appear on every invoice.",
        "Integration questions about SSO and SCIM provisioning forwarded to solutions engineering.",
        "{title} {last} mentioned they are consolidating three regional vendors into one contract.",
        "Invoices are paid from {iban}; remittance advice goes to {email}.",
    ],
}

NOTE_SIGNOFF = [
    "\nEntered by {author}.",
    "\n-- {author}",
    "\nSigned: {author}, {date}",
    "",
]


def note_record(ctx: Ctx, note_type: str) -> tuple[str, list[dict[str, Any]], str]:
    """One note; returns (text, spans, locale)."""
    rng = ctx.rng
    person = make_person(ctx, "en_US" if note_type != "crm" and rng.random() < 0.8 else None)
    fake = ctx.fakers[person.locale]
    slots: Slots = {
        **person_slots(person),
        "date": (fmt_date(rng, ctx.day(), person.locale), DATE_TIME),
        "date2": (fmt_date(rng, ctx.day(), person.locale), DATE_TIME),
        "dob": (fmt_date(rng, ctx.day(birth=True), person.locale), DATE_TIME),
        "mrn": (fresh_value(ctx, lambda: f"MRN-{rng.randint(1000000, 9999999)}", "mrn"), ACCOUNT_ID),
        "emp": (fresh_value(ctx, lambda: f"E{rng.randint(100000, 999999)}", "employee id"), ACCOUNT_ID),
        "doctor": (full_name(ctx), PERSON),
        "doctor2": (full_name(ctx), PERSON),
        "manager": (full_name(ctx), PERSON),
        "contact": (full_name(ctx), PERSON),
        "author": (full_name(ctx), PERSON),
        "phone2": (us_phone(rng) if person.locale == "en_US" else fake.phone_number(), PHONE_NUMBER),
    }
    if note_type == "clinical":
        suffixes = ["Family Clinic", "Medical Group", "Health Center", "Internal Medicine"]
        org = fresh_value(ctx, lambda: f"{fake.last_name()} {rng.choice(suffixes)}", "clinic")
    else:
        org = fresh_value(ctx, lambda: fake.company(), "company")
    slots["org"] = (org, ORGANIZATION)
    if person.locale == "en_US":
        slots["ssn"] = (fresh_value(ctx, lambda: ctx.fakers["en_US"].ssn(), "ssn"), US_SSN)
    else:
        slots["iban"] = (iban(fake, rng), IBAN_CODE)
    pick = Picker(rng, slots)
    doc = Doc()
    doc.render(pick(NOTE_HEADERS[note_type]), slots)
    pool = NOTE_BODY[note_type]
    body = [pick(pool, prefer_private=0.1) for _ in range(rng.choice([3, 3, 4, 4, 5]))]
    if note_type == "clinical" and rng.random() < 0.6:
        body.sort(key=pool.index)
    layout = rng.choice(["paragraph", "lines", "bullets"])
    for i, template in enumerate(body):
        if layout == "paragraph":
            doc.add(" " if i else "")
        else:
            doc.add("\n" if i else "")
            if layout == "bullets":
                doc.add("- ")
        doc.render(template, slots)
    doc.render(pick(NOTE_SIGNOFF), slots)
    return doc.text, doc.spans, person.locale


def gen_note(ctx: Ctx, scope: str) -> dict[str, Any]:
    """One note record (regenerated until it passes the checks)."""
    note_type = ctx.rng.choice(["clinical", "clinical", "hr", "crm"])
    for _ in range(200):
        text, spans, locale = note_record(ctx, note_type)
        if not record_problems(text, spans, ctx):
            return build_record("", "text", scope, text, spans, {"note_type": note_type, "locale": locale})
    raise RuntimeError(f"could not generate note {scope}")
