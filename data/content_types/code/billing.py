"""Billing helpers of the Acme Sync back office: invoices, late fees, proration, refunds."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

VAT_RATE = 0.21
LATE_FEE_RATE = 0.015
LATE_FEE_CAP = 50.0


@dataclass
class Invoice:
    """One monthly invoice of a workspace."""

    workspace: str
    amount: float
    due: date
    paid: bool = False

    def total_with_vat(self) -> float:
        """The amount the customer pays, VAT included."""
        return round(self.amount * (1 + VAT_RATE), 2)

    def days_overdue(self, today: date) -> int:
        """Days past the due date; 0 when paid or not yet due."""
        if self.paid or today <= self.due:
            return 0
        return (today - self.due).days


def late_fee(invoice: Invoice, today: date) -> float:
    """The late fee of an overdue invoice: 1.5 percent per started month overdue, capped."""
    days = invoice.days_overdue(today)
    if days == 0:
        return 0.0
    months = (days + 29) // 30
    fee = invoice.amount * LATE_FEE_RATE * months
    return round(min(fee, LATE_FEE_CAP), 2)


def prorate(monthly_price: float, seats_added: int, days_left: int, days_in_month: int) -> float:
    """The charge for seats added mid-month: the price per seat times the share of the
    month that is left, rounded to cents."""
    if days_in_month <= 0:
        raise ValueError("days_in_month must be positive")
    share = max(0, days_left) / days_in_month
    return round(monthly_price * seats_added * share, 2)


def refund_amount(invoice: Invoice, duplicate: bool, days_since_payment: int) -> float:
    """What we refund: a duplicate charge in full; otherwise nothing after 30 days, and
    within 30 days the amount without VAT minus a 5 percent handling fee."""
    if duplicate:
        return invoice.total_with_vat()
    if days_since_payment > 30:
        return 0.0
    return round(invoice.amount * 0.95, 2)


class DunningSchedule:
    """When reminders go out for an unpaid invoice and when the workspace turns read-only."""

    reminder_days = (1, 7, 13)
    read_only_after = 14

    def next_reminder(self, days_overdue: int) -> int | None:
        """The day of the next reminder, or None when all reminders were sent."""
        for day in self.reminder_days:
            if day > days_overdue:
                return day
        return None

    def is_read_only(self, days_overdue: int) -> bool:
        """Whether the workspace is read-only: after the fourteen-day grace period."""
        return days_overdue > self.read_only_after
