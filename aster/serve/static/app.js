// The page of aster-serve: sends the picked or dropped images to POST /v1/recognize and shows,
// for each, the image with the rectifier's control points, the rectified image, text and score.
"use strict";

const results = document.getElementById("results");
const statusLine = document.getElementById("status");

function element(tag, attributes, text) {
  const node = document.createElement(tag);
  Object.entries(attributes || {}).forEach(([key, value]) => node.setAttribute(key, value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function percent(value) {
  return value === null || value === undefined ? "n/a" : (100 * value).toFixed(1) + "%";
}

async function showModel() {
  const line = document.getElementById("model");
  try {
    const info = await (await fetch("/v1/model")).json();
    const parts = [info.name];
    if (info.step !== null) parts.push("step " + info.step);
    if (info.charset) parts.push("charset " + info.charset);
    if (info.accuracy) {
      const scored = info.protocol ? " (scored " + info.protocol + ")" : "";
      parts.push(Object.entries(info.accuracy).map(([set, acc]) => set + " " + percent(acc))
        .join(", ") + scored);
    }
    line.textContent = "Model: " + parts.join(" · ");
  } catch (error) {
    line.textContent = "Model facts unavailable (" + error + ")";
  }
}

// The image scaled to 64 px high on a canvas, with the control points (normalised [0, 1]
// coordinates of the input; the first half the top edge, the rest the bottom edge).
function drawWithPoints(file, points) {
  const canvas = element("canvas", {class: "input"});
  const image = new Image();
  image.onload = () => {
    const scale = 64 / image.naturalHeight;
    canvas.height = 64;
    canvas.width = Math.max(1, Math.round(image.naturalWidth * scale));
    const context = canvas.getContext("2d");
    context.drawImage(image, 0, 0, canvas.width, canvas.height);
    URL.revokeObjectURL(image.src);
    if (!points) return;
    const half = points.length / 2;
    [[points.slice(0, half), "#ffdc00"], [points.slice(half), "#00dcff"]].forEach(([edge, c]) => {
      context.strokeStyle = c;
      context.fillStyle = c;
      context.beginPath();
      edge.forEach(([x, y], i) => {
        const px = x * (canvas.width - 1), py = y * (canvas.height - 1);
        if (i === 0) context.moveTo(px, py); else context.lineTo(px, py);
      });
      context.stroke();
      edge.forEach(([x, y]) => {
        context.beginPath();
        context.arc(x * (canvas.width - 1), y * (canvas.height - 1), 2.5, 0, 2 * Math.PI);
        context.fill();
      });
    });
  };
  image.src = URL.createObjectURL(file);
  return canvas;
}

function figure(content, caption) {
  const node = element("figure");
  node.append(content, element("figcaption", {}, caption));
  return node;
}

function showResult(file, entry) {
  const card = element("article", {class: "result"});
  if (entry.error !== undefined) {
    card.classList.add("error");
    card.append(figure(drawWithPoints(file, null), file.name),
                element("span"), element("p", {class: "message"}, entry.error));
  } else {
    const rectified = element("img", {class: "rectified", alt: "rectified " + file.name,
                                      src: "data:image/png;base64," + entry.rectified_png});
    const words = element("div");
    words.append(element("div", {class: "text"}, entry.text),
                 element("div", {class: "score"},
                         "score " + entry.score.toFixed(3) + " (" +
                         percent(Math.exp(entry.score)) + ")"));
    card.append(figure(drawWithPoints(file, entry.control_points), file.name),
                figure(rectified, "rectified"), words);
  }
  results.prepend(card);
}

async function recognize(files) {
  if (!files.length) return;
  const form = new FormData();
  files.forEach((file) => form.append("images", file, file.name));
  statusLine.textContent = "Reading " + files.length + " image(s)…";
  try {
    const response = await fetch("/v1/recognize?rectified=1&control_points=1",
                                 {method: "POST", body: form});
    const body = await response.json();
    if (!body.results) {
      statusLine.textContent = "Error " + response.status + ": " + body.error;
      return;
    }
    body.results.slice().reverse().forEach((entry) => showResult(files[entry.index], entry));
    statusLine.textContent = body.error ? "Error " + response.status + ": " + body.error :
      "Read " + files.length + " image(s).";
  } catch (error) {
    statusLine.textContent = "Request failed: " + error;
  }
}

const drop = document.getElementById("drop");
const input = document.getElementById("files");
input.addEventListener("change", () => {
  recognize(Array.from(input.files));
  input.value = "";
});
["dragenter", "dragover"].forEach((name) => drop.addEventListener(name, (event) => {
  event.preventDefault();
  drop.classList.add("over");
}));
["dragleave", "drop"].forEach((name) => drop.addEventListener(name, (event) => {
  event.preventDefault();
  drop.classList.remove("over");
}));
drop.addEventListener("drop", (event) => recognize(Array.from(event.dataTransfer.files)));
showModel();
