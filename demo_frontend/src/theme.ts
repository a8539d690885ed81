// The page's frontend tool: `set_theme` is called by the agent and run here, in the browser. Both tabs
// declare it the same way (AG-UI lists it in RunAgentInput.tools; the AI SDK server knows it already).

export type Theme = "dark" | "light";

export const SET_THEME_TOOL = {
  name: "set_theme",
  description:
    "Switch the page between the dark and the light theme. The page runs this tool itself and returns the theme it applied.",
  parameters: {
    type: "object",
    properties: { theme: { type: "string", enum: ["dark", "light"] } },
    required: ["theme"],
    additionalProperties: false,
  },
};

/** Apply the theme the agent asked for; the result goes back to the agent as the tool's output. */
export function runSetTheme(input: unknown): { theme: Theme } {
  const asked = input && typeof input === "object" ? (input as Record<string, unknown>).theme : undefined;
  const theme: Theme = asked === "light" ? "light" : "dark";
  document.documentElement.dataset.theme = theme;
  return { theme };
}
