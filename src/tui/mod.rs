//! Terminal UI (ratatui + crossterm).
