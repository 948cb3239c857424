"""One panel per module: a pure ``render_*`` function and the widget that shows it."""
