// The heatmap and the token-to-token lines of the head on screen, and the query they
// follow. Inlined after viewer.js into its (strict) script: it uses viewer.js's state,
// DATA and helpers.

function activeQuery() { return state.hoverQuery !== null ? state.hoverQuery : state.query; }

function cellSize(count, width) {
  return Math.max(2, Math.min(24, Math.floor(width / Math.max(count, 1))));
}

function renderHeatmap() {
  const example = DATA.examples[state.example];
  const count = example.tokens.length, matrix = currentMatrix();
  // Fit the panel: the labels take 96 px when the cells are large enough to label.
  const width = Math.max(byId("heatmap-box").clientWidth - 8, 200);
  const showLabels = cellSize(count, width - 96) >= 8;
  const margin = showLabels ? 96 : 4;
  const cell = cellSize(count, width - margin);
  const canvas = byId("heatmap");
  canvas.width = margin + count * cell + 4;
  canvas.height = margin + count * cell + 4;
  const context = canvas.getContext("2d");
  context.fillStyle = "#ffffff";
  context.fillRect(0, 0, canvas.width, canvas.height);
  let largest = 0;
  for (const value of matrix) largest = Math.max(largest, value);
  largest = largest || 1;
  for (let query = 0; query < count; query++) {
    for (let key = 0; key < count; key++) {
      const [red, green, blue] = viridis(matrix[query * count + key] / largest);
      context.fillStyle = `rgb(${red}, ${green}, ${blue})`;
      context.fillRect(margin + key * cell, margin + query * cell, cell, cell);
    }
  }
  if (showLabels) {
    // fillText draws glyphs, so any token text is shown literally.
    context.fillStyle = "#1d2330";
    context.font = `${Math.min(cell - 1, 12)}px system-ui, sans-serif`;
    context.textAlign = "right";
    context.textBaseline = "middle";
    example.tokens.forEach((token, index) => {
      context.fillStyle = isSpecial(example, index) ? SPECIAL_COLOUR : "#1d2330";
      context.fillText(shorten(token, 12), margin - 4, margin + (index + 0.5) * cell);
      context.save();
      context.translate(margin + (index + 0.5) * cell, margin - 4);
      context.rotate(Math.PI / 2);
      context.textAlign = "right";
      context.fillText(shorten(token, 12), 0, 0);
      context.restore();
    });
  }
  const query = activeQuery();
  if (query !== null && query < count) {
    context.strokeStyle = "#ff3b30";
    context.lineWidth = 2;
    context.strokeRect(margin - 1, margin + query * cell - 1, count * cell + 2, cell + 2);
  }
  canvas.dataset.margin = String(margin);
  canvas.dataset.cell = String(cell);
}

function heatmapCell(event) {
  const canvas = byId("heatmap"), rectangle = canvas.getBoundingClientRect();
  const margin = Number(canvas.dataset.margin), cell = Number(canvas.dataset.cell);
  const count = DATA.examples[state.example].tokens.length;
  const key = Math.floor((event.clientX - rectangle.left - margin) / cell);
  const query = Math.floor((event.clientY - rectangle.top - margin) / cell);
  if (key < 0 || query < 0 || key >= count || query >= count) return null;
  return { query, key };
}

function renderLines() {
  const example = DATA.examples[state.example];
  const count = example.tokens.length, matrix = currentMatrix();
  const svg = byId("lines");
  clear(svg);
  const rowHeight = 18, width = 440, leftX = 130, rightX = width - 130;
  svg.setAttribute("width", String(width));
  svg.setAttribute("height", String(count * rowHeight + 10));
  const query = activeQuery();
  const group = document.createElementNS(SVG_NS, "g");
  svg.appendChild(group);
  for (let row = 0; row < count; row++) {
    if (query !== null && row !== query) continue;
    let rowLargest = 0;
    for (let key = 0; key < count; key++) {
      rowLargest = Math.max(rowLargest, matrix[row * count + key]);
    }
    for (let key = 0; key < count; key++) {
      const weight = matrix[row * count + key];
      // Without a chosen query, only the strong links are drawn to keep the view readable.
      if (weight <= 0 || (query === null && weight < 0.25 * rowLargest)) continue;
      const line = document.createElementNS(SVG_NS, "line");
      line.setAttribute("x1", String(leftX + 4));
      line.setAttribute("y1", String(row * rowHeight + 14));
      line.setAttribute("x2", String(rightX - 4));
      line.setAttribute("y2", String(key * rowHeight + 14));
      line.setAttribute("stroke", query === null ? "#3b6fd8" : "#e8590c");
      line.setAttribute("stroke-width", query === null ? "1.5" : "2.5");
      const opacity = (weight / (rowLargest || 1)) * (query === null ? 0.5 : 0.95);
      line.setAttribute("stroke-opacity", opacity.toFixed(3));
      group.appendChild(line);
    }
  }
  example.tokens.forEach((token, index) => {
    for (const side of ["query", "key"]) {
      const text = document.createElementNS(SVG_NS, "text");
      text.textContent = shorten(token, 16);
      text.setAttribute("x", String(side === "query" ? leftX : rightX));
      text.setAttribute("y", String(index * rowHeight + 18));
      text.setAttribute("text-anchor", side === "query" ? "end" : "start");
      if (isSpecial(example, index)) text.classList.add("special");
      if (side === "query") {
        if (index === query) text.classList.add("active");
        text.addEventListener("mouseenter", () => setHoverQuery(index));
        text.addEventListener("mouseleave", () => setHoverQuery(null));
        text.addEventListener("click", () => selectQuery(index));
      }
      svg.appendChild(text);
    }
  });
}

// Re-rendering replaces the hovered element, which fires mouseenter again: skip no-ops.
function setHoverQuery(index) {
  if (state.hoverQuery === index) return;
  state.hoverQuery = index;
  renderQueryViews();
}

function selectQuery(index) {
  state.query = state.query === index ? null : index;
  renderQueryViews();
}

function renderQueryViews() { renderHeatmap(); renderLines(); renderRollout(); }
