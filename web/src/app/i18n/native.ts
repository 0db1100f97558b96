// The native game terms a Vietnamese or English page keeps in hanzi, because players of these
// games use them as they are (as Ù, phỏm, quan, dân stay Vietnamese in Chinese): the one list
// the browser tests hold the vi and en pages to (web/test/harness.ts, hanziOutside). Everything
// else the portal says in vi and en is in that language: 金币 is "xu" / "coins", 过关斩将 "Vượt
// ải" / "Ladder", 信誉度 "Uy tín" / "Reputation". Drawn things are not words: a piece, a tile's
// face, the 象棋 river and its move list carry data-native and are not read.

/** Longest first, so a term is removed before a shorter one inside it. */
export const NATIVE_TERMS: readonly string[] = [
  // games' own names as their players say them
  "够级", "连连看",
  // 洪洞王牌麻将 (mahjong): claims, declarations, melds, the wild tile, scoring items
  "对王大将报", "对王", "报听", "硬扣", "明杠", "补杠", "暗杠", "杠", "碰", "胡", "自摸", "荒庄", "赖子", "赖",
  "平胡", "七对", "吊王", "单元胡", "清一色", "混一色", "楼上楼", "一条龙", "字一色", "中发白", "东南西北",
  // 够级: revolution, burning, tribute, places, the round's close
  "四人乱缠", "革命", "扣牌", "扣", "烧", "捎牌", "进贡", "还贡", "无头", "头科", "二科", "三科", "四科", "二落", "大落",
  "大王", "小王",
].slice().sort((a, b) => b.length - a.length);

/** Whether a text has a Han character. */
export const HAN = /\p{Script=Han}/u;

/** The hanzi the boards draw on every page (pieces, tile faces, the 象棋 river and move list, the
 * logo, the language switch's 中): with NATIVE_TERMS, the characters of the small "Chieu Han" font
 * the build cuts from Noto Sans SC (scripts/build.mjs takes every Han character of this file), so
 * a Vietnamese or English page draws them without fetching Noto Sans SC's pieces. */
export const DRAWN_HAN =
  "帥仕相馬車炮兵將士象砲卒帅将车马楚河汉界棋中文" +  // 象棋's pieces (both scripts), its river, the logo, 中文
  "一二三四五六七八九进退平前后１２３４５６７８９" +  // the 象棋 move list (兵三进一, 炮８平５)
  "万条筒东南西北中发白王";  // mahjong's tiles
