import type { ReactNode } from "react";
import "@copilotkit/react-core/v2/styles.css";
import "./styles.css";

export const metadata = { title: "streamkit + CopilotKit" };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
