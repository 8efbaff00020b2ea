// Whether a written date names a day the calendar has: `Date` rolls a day past the month's end
// over into the next (2030-02-31 is 3 March), so a check by parsing alone lets it through.

/** The day `year`-`month`-`day` (month 1–12) exists. */
export function isCalendarDay(year: number, month: number, day: number): boolean {
  const date = new Date(Date.UTC(year, month - 1, day));
  return (
    date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
  );
}
