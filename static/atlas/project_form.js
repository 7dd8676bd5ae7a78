// Searchable pickers on the project form: typing narrows a long checkbox list to the names that
// contain the text; the ticked ones are listed above it, so a choice never hides.
(function () {
  "use strict";
  function setUp(picker) {
    var filter = picker.querySelector(".picker-filter");
    var chosen = picker.querySelector(".picker-chosen");
    var options = Array.prototype.slice.call(picker.querySelectorAll(".picker-options input[type=checkbox]"));
    function labelOf(box) { var l = box.closest("label"); return l ? l.textContent.trim() : box.value; }
    function refresh() {
      var needle = filter.value.trim().toLowerCase();
      options.forEach(function (box) {
        var item = box.closest("div") || box.closest("label");
        var match = !needle || labelOf(box).toLowerCase().indexOf(needle) >= 0 || box.value.indexOf(needle) >= 0;
        item.hidden = !match;
      });
      var ticked = options.filter(function (b) { return b.checked; }).map(labelOf);
      chosen.textContent = ticked.length ? "Chosen: " + ticked.join(", ") : "None chosen.";
    }
    filter.addEventListener("input", refresh);
    filter.addEventListener("keydown", function (ev) { if (ev.key === "Enter") { ev.preventDefault(); } });
    picker.addEventListener("change", refresh);
    refresh();
  }
  document.querySelectorAll("[data-picker]").forEach(setUp);
})();
