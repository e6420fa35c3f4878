"""Daily OHLCV prices of five tickers from bokeh_sampledata, one record per ticker-year."""

from __future__ import annotations

import numpy as np
import pandas as pd

from itemsmith.handlers.datasets._frame import FrameHandler

CHANNELS = ["open", "high", "low", "close", "volume", "adj_close"]


class StocksHandler(FrameHandler):
    name = "stocks"
    description = (
        "Daily US stock prices (trading days only) of AAPL, FB, GOOG, IBM, MSFT, 2000-03-01 to 2013-03-01, from\n"
        "bokeh_sampledata 'stocks' (Quandl WIKI Prices, declared public domain). Partial years: 2000 (from March),\n"
        "2013 (to March 1), GOOG 2004 (from its 2004-08-19 IPO), FB 2012 (from its 2012-05-18 IPO).\n"
        "54 records, one per ticker and calendar year: record_id 'TICKER-YYYY' (e.g. 'AAPL-2005').\n"
        "series(id): DatetimeIndex 'date', columns open, high, low, close (unadjusted, USD per share), volume\n"
        "(shares traded), adj_close (split- and dividend-adjusted close, USD). Unadjusted prices jump at stock\n"
        "splits (AAPL 2000-06-21 and 2005-02-28, MSFT 2003-02-18): use adj_close for returns.\n"
        "Labels: ticker, year, n_days (trading days), first_date, last_date ('YYYY-MM-DD'), full_year (data from\n"
        "January to December), return_pct = 100*(last adj_close / first adj_close - 1) within the record,\n"
        "max_drawdown_pct = largest % fall of adj_close from its running peak within the record (>= 0),\n"
        "volatility_pct = std of daily adj_close % changes (ddof=1) * sqrt(252), has_split (a day where close and\n"
        "adj_close daily changes differ by > 20 percentage points)."
    )
    units = {"open": "USD", "high": "USD", "low": "USD", "close": "USD", "volume": "shares", "adj_close": "USD"}

    def _build(self) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
        from bokeh_sampledata.stocks import data

        rows, frames = [], {}
        for (ticker, year), group in data.groupby([data["ticker"], data["date"].dt.year], sort=True):
            rid = f"{ticker}-{year}"
            prices = group.set_index("date")[CHANNELS].sort_index().astype(float)
            adj, dates = prices["adj_close"], prices.index
            change = adj.pct_change()
            rows.append({"record_id": rid, "ticker": ticker, "year": int(year), "n_days": len(prices),
                         "first_date": dates[0].strftime("%Y-%m-%d"), "last_date": dates[-1].strftime("%Y-%m-%d"),
                         "full_year": bool(dates[0].month == 1 and dates[-1].month == 12),
                         "return_pct": 100 * (adj.iloc[-1] / adj.iloc[0] - 1),
                         "max_drawdown_pct": 100 * float((1 - adj / adj.cummax()).max()),
                         "volatility_pct": 100 * change.std() * np.sqrt(252),
                         "has_split": bool(((prices["close"].pct_change() - change).abs() > 0.2).any())})
            frames[rid] = prices
        return pd.DataFrame(rows), frames
