// Long tables (the claims ledgers) made sortable, searchable and filterable with DataTables,
// from the offline bundle of the itables package (benchbook.datatables copies it here).
// Loaded only where such a table is. Every row stays in the page (no paging), so links to
// a ledger row keep working; each column's menu sorts it and filters it by its values.
const tables = document.querySelectorAll("table.benchbook-filterable");
if (tables.length) {
  const here = new URL(".", import.meta.url);
  const css = document.createElement("link");
  css.rel = "stylesheet";
  css.href = new URL("datatables.css", here).href;
  document.head.appendChild(css);
  const { default: DataTable } = await import(new URL("datatables.js", here).href);
  tables.forEach((table) => {
    // a column of few distinct values (verdict, kind, basis) filters by picking values;
    // the others by typing
    const rows = [...table.tBodies[0].rows];
    const columnDefs = [...table.tHead.rows[0].cells].map((th, i) => {
      const values = new Set(rows.map((row) => (row.cells[i] ? row.cells[i].textContent.trim() : "")));
      return { targets: i, columnControl: ["order", [values.size <= 12 ? "searchList" : "search"]] };
    });
    new DataTable(table, {
      paging: false,
      order: [],
      autoWidth: false,
      columnDefs,
      ordering: { indicators: false, handler: false },
      language: { search: "Search:" },
    });
  });
}
