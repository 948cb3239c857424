"""The Textual dashboard: the only package of sgmon that imports textual or rich.

``sgmon.tui.live.run_dashboard`` is the entry point: it starts the collectors, then imports
Textual.  The panels under ``panels/`` each pair a pure render function (a pane's view -> a Rich
renderable, testable without an App) with a small widget.
"""
