// Seat and plan rules of the Acme Sync admin console.

export type Plan = "starter" | "business";

const SEAT_PRICE: Record<Plan, number> = { starter: 6, business: 15 };

/** The storage quota of a workspace: 100 GB per seat on Starter, 1 TB per seat on Business. */
export function storageQuotaGb(plan: Plan, seats: number): number {
  const perSeat = plan === "business" ? 1000 : 100;
  return perSeat * Math.max(seats, 1);
}

/** Whether a user takes a paid seat: guests and service accounts never do. */
export function usesSeat(kind: "member" | "guest" | "service"): boolean {
  return kind === "member";
}

export class SeatCounter {
  private members = new Map<string, boolean>();

  /** Add a member; deactivated members keep their seat until the next billing date. */
  add(id: string, active = true): void {
    this.members.set(id, active);
  }

  /** Seats billed now: every member, active or deactivated, until the billing date passes. */
  billedSeats(billingDatePassed: boolean): number {
    let seats = 0;
    for (const active of this.members.values()) {
      if (active || !billingDatePassed) {
        seats += 1;
      }
    }
    return seats;
  }
}

/** The monthly price: seats times the plan's seat price, with 10 percent off at 50 seats or more. */
export const monthlyPrice = (plan: Plan, seats: number): number => {
  const base = SEAT_PRICE[plan] * seats;
  const discount = seats >= 50 ? 0.1 : 0;
  return Math.round(base * (1 - discount) * 100) / 100;
};

/** Whether a plan may use single sign-on: Business only. */
export function allowsSso(plan: Plan): boolean {
  return plan === "business";
}
