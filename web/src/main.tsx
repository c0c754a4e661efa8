/// <reference lib="dom" />
/** The console's entry: mounts the app into the page the server serves at `/`. */
import { render } from "preact";
import { App } from "./app.tsx";

render(<App />, document.getElementById("app")!);
